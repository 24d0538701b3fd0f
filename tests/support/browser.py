"""Headless Chromium (Debian's chromium + chromium-driver) driven by Selenium, for dashboard tests.

Never downloads a browser: it uses /usr/bin/chromium and /usr/bin/chromedriver, which `make test`
(as root) and `.ci/run` install with apt-get; without them the test fails with that instruction.
"""
from __future__ import annotations

import shutil
import tempfile

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1440,2600"]


def chromium():
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        raise RuntimeError("the dashboard test needs Debian's chromium and chromium-driver: "
                           "apt-get install -y chromium chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={tempfile.mkdtemp(prefix='cachegate-chromium-')}"]:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
