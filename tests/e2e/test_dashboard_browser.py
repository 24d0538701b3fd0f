"""The dashboard in a real browser: headless Chromium logs in with the token, shows the figures of the
traffic just sent (curated answers and verified hits included), invalidates an entry with its button, and
leaves a screenshot."""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.browser import chromium
from tests.support.fake_backend import EchoBackend
from tests.support.live_server import LiveServer

TOKEN = "dashboard-test-token"
QUESTIONS = ["How do I reset my password?", "What are your opening hours?", "Do you ship to Canada?",
             "How do I reset my password?", "What are your opening hours?", "How do I reset my password?",
             "Can I pay with PayPal?", "Where is my parcel?", "Has my parcel shipped yet?"]
LIBRARY = [{"id": "parcel", "answer": "Track it under Orders > Delivery.",
            "questions": ["Where is my parcel?", "Has my parcel shipped yet?", "Track my parcel"]}]


@pytest.fixture
def gateway():
    settings = make_settings(admin={"token": TOKEN}, models=[{"name": "echo", "price_out_per_1k": 2.0}],
                             cache={"semantic": {"policy": "cosine", "threshold": 0.97}})
    with LiveServer(create_app(settings, backends={"echo": EchoBackend()})) as server:
        httpx.post(server.url + "/admin/api/answers", json={"answers": LIBRARY},
                   headers={"authorization": f"Bearer {TOKEN}"}).raise_for_status()
        yield server


def send(url: str, question: str) -> httpx.Response:
    body = {"model": "echo", "messages": [{"role": "user", "content": question}]}
    return httpx.post(url + "/v1/chat/completions", json=body, timeout=30)


def test_dashboard_shows_the_traffic_and_invalidates_an_entry(gateway, tmp_path):
    replies = [send(gateway.url, q) for q in QUESTIONS]
    seen = Counter(r.headers["x-cachegate-cache"] for r in replies)
    curated = next(r for r in replies if r.headers["x-cachegate-cache"] == "hit-curated")
    httpx.post(gateway.url + "/v1/cache/feedback", json={"id": curated.json()["id"], "good": True}).raise_for_status()
    with chromium() as browser:
        browser.get(gateway.url + "/admin")
        wait = WebDriverWait(browser, 30)
        wait.until(ec.visibility_of_element_located((By.ID, "token"))).send_keys(TOKEN)
        browser.find_element(By.CSS_SELECTOR, "#login-form button").click()
        wait.until(lambda b: b.find_element(By.ID, "kpi-requests").get_attribute("data-value") == str(len(QUESTIONS)))

        def kpi(name: str) -> str:
            return browser.find_element(By.ID, name).get_attribute("data-value")
        assert kpi("kpi-exact") == str(seen["hit-exact"]) and seen["hit-exact"] == 3
        assert kpi("kpi-curated") == str(seen["hit-curated"]) and seen["hit-curated"] == 2
        assert kpi("kpi-misses") == str(seen["miss"])
        hits = seen["hit-exact"] + seen["hit-curated"] + seen["hit-semantic"]
        assert float(kpi("kpi-hit-rate")) == pytest.approx(hits / len(QUESTIONS), abs=1e-4)
        assert browser.find_element(By.ID, "kpi-hit-rate").text == f"{100 * hits / len(QUESTIONS):.1f}%"
        assert browser.find_element(By.CSS_SELECTOR, "#routes [data-tier=small]").get_attribute("data-count") == \
            str(len(QUESTIONS))

        answer = wait.until(lambda b: b.find_element(By.CSS_SELECTOR, '#answers tr[data-id="parcel"]'))
        assert answer.find_element(By.CSS_SELECTOR, "td.hits").text == "2"
        verified = wait.until(lambda b: b.find_element(By.CSS_SELECTOR, '#verified tr[data-namespace="default"]'))
        assert "0.0%" in verified.text                    # one hit checked (feedback: right), none wrong

        top = browser.find_element(By.CSS_SELECTOR, "#entries tbody tr")
        assert top.find_element(By.CSS_SELECTOR, "td:nth-child(2)").text == "How do I reset my password?"
        assert top.find_element(By.CSS_SELECTOR, "td.hits").text == "2"
        browser.save_screenshot(str(tmp_path / "dashboard.png"))
        if os.environ.get("CACHEGATE_SCREENSHOT_DIR"):
            browser.save_screenshot(str(Path(os.environ["CACHEGATE_SCREENSHOT_DIR"]) / "dashboard.png"))

        key = top.get_attribute("data-key")
        top.find_element(By.CSS_SELECTOR, "button.invalidate").click()
        wait.until(lambda b: f"invalidated {key}" in b.find_element(By.ID, "notice").text)
    assert (tmp_path / "dashboard.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert send(gateway.url, "How do I reset my password?").headers["x-cachegate-cache"] != "hit-exact"


def test_dashboard_without_the_token_asks_for_it(gateway):
    with chromium() as browser:
        browser.get(gateway.url + "/admin")
        reason = WebDriverWait(browser, 30).until(ec.visibility_of_element_located((By.ID, "login-reason")))
        assert "token" in reason.text
        assert browser.find_element(By.ID, "kpi-requests").text == "–"
