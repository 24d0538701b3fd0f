"""Headless Chromium (Debian's chromium + chromium-driver) driven by Selenium, for dashboard tests.

Never downloads a browser: it uses /usr/bin/chromium and /usr/bin/chromedriver, which `make test`
(as root) and `.ci/run` install with apt-get; without them the test fails with that instruction.
"""
from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1440,2600"]


@contextmanager
def chromium() -> Iterator:
    """A browser for one test: quit, and its profile folder removed, when the block ends."""
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        raise RuntimeError("the dashboard test needs Debian's chromium and chromium-driver: "
                           "apt-get install -y chromium chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="cachegate-chromium-")
    for flag in FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    try:
        browser = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
        try:
            yield browser
        finally:
            browser.quit()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
