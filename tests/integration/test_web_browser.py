"""The web table and the game viewer in a real headless Chromium (Selenium, Debian's chromium and
chromedriver, no Selenium Manager downloads), against the real server (uvicorn on a free
loopback port, in a thread).

One browser for the module: the table page starts a Mexican Train game against three Commanders,
the person clicks a legal move and sees the bots answer, asks the advisor; the game viewer
replays a recorded game from real Arrow shards step by step with the visit distribution beside
it. Each page is photographed; with ``WEB_SCREENSHOT_DIR=docs`` the pictures are written there
(``docs/web.png``, ``docs/web-replay.png``: the README's), else under the test's tmp dir.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.ui import WebDriverWait

from omega_cluster.play.web.app import create_app
from omega_cluster.play.web.server import bind

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from replay_helpers import make_run

# one browser and one server for the module: its tests stay on one xdist worker
pytestmark = pytest.mark.xdist_group("web_browser")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
MT = {"players": 4, "double_set": 9, "rounds": 1}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    runs = tmp_path_factory.mktemp("runs")
    run = make_run(runs, name="mt-run", games=2, game="mexican_train", params=MT)
    rating_plot(run / "plots" / "rating.png")
    sock = bind("127.0.0.1", 0)
    config = uvicorn.Config(create_app(runs), log_level="warning", access_log=False)
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uv.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert uv.started, "the server did not start"
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        uv.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    for path in (CHROMIUM, CHROMEDRIVER):
        assert os.access(path, os.X_OK), f"{path} missing: apt-get install chromium chromium-driver"
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must never try to download anything
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--window-size=1280,1000",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(15)
    try:
        yield driver
    finally:
        driver.quit()


def rating_plot(path: Path) -> None:
    """A small ratings plot in place of the helper's 1-pixel PNG (what the viewer shows)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 2.4), dpi=80)
    ax.errorbar([0, 1], [1150, 1234], yerr=[[120, 134], [120, 116]], marker="o", capsize=3)
    ax.set(xlabel="champion version", ylabel="anchored Elo", xticks=[0, 1])
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def screenshot(driver: WebDriver, name: str, tmp_path: Path) -> Path:
    folder = Path(os.environ.get("WEB_SCREENSHOT_DIR") or tmp_path)
    path = folder / name
    height = driver.execute_script("return document.documentElement.scrollHeight")
    chrome = driver.execute_script("return window.outerHeight - window.innerHeight")
    driver.set_window_size(1280, min(int(height) + int(chrome) + 20, 1800))
    assert driver.save_screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
    return path


def wait(driver: WebDriver, seconds: float = 10) -> WebDriverWait:
    return WebDriverWait(driver, seconds)


def test_play_a_move_against_bots_and_ask_the_advisor(
    server: str, browser: WebDriver, tmp_path: Path
) -> None:
    browser.get(server + "/")
    wait(browser).until(lambda d: len(Select(d.find_element(By.ID, "game")).options) >= 4)
    Select(browser.find_element(By.ID, "game")).select_by_value("mexican_train")
    for field, value in (("params", "double_set=9, rounds=1"), ("seed", "5"),
                         ("seats", "you,commander,commander,commander")):  # fmt: skip
        box = browser.find_element(By.ID, field)
        box.clear()
        box.send_keys(value)
    browser.find_element(By.ID, "start").click()
    moves = wait(browser).until(
        ec.presence_of_all_elements_located((By.CSS_SELECTOR, "#moves button.move"))
    )
    view = browser.find_element(By.ID, "view").text
    assert "your hand (seat 0)" in view and "boneyard" in view
    status = browser.find_element(By.ID, "status").text
    assert "mexican_train" in status and "seat 0 to move" in status
    first = moves[0].text.split(". ", 1)[1]
    moves[0].click()
    # the person's move is listed, then the three Commanders' answers
    wait(browser).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#events li")) >= 4)
    events = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#events li")]
    assert events[0] == f"seat 0 (you): {first}"
    assert [e.split(" ")[1] for e in events[1:4]] == ["1", "2", "3"]
    assert all("(commander)" in e for e in events[1:4])
    assert browser.find_element(By.ID, "error").text == ""
    browser.find_element(By.ID, "advise").click()
    table = wait(browser).until(ec.presence_of_element_located((By.ID, "advice-table")))
    rows = table.find_elements(By.TAG_NAME, "tr")
    legal = browser.find_elements(By.CSS_SELECTOR, "#moves button.move")
    assert len(rows) == len(legal) + 1  # a header, then one row per legal move
    why = browser.find_element(By.ID, "advice-text").text
    assert why.startswith("why: ") or why == "(no explanation)"  # a game without named terms
    screenshot(browser, "web.png", tmp_path)


def test_replay_a_recorded_game_step_by_step(
    server: str, browser: WebDriver, tmp_path: Path
) -> None:
    browser.get(server + "/replay")
    wait(browser).until(lambda d: len(Select(d.find_element(By.ID, "games")).options) == 2)
    Select(browser.find_element(By.ID, "games")).select_by_value("mexican-1")
    browser.find_element(By.ID, "load").click()
    wait(browser).until(ec.text_to_be_present_in_element((By.ID, "step-label"), "decision 1 of"))
    info = browser.find_element(By.ID, "game-info").text
    assert info.startswith("mexican-1: mexican_train") and "seed 101" in info
    before = browser.find_element(By.ID, "position").text
    browser.find_element(By.ID, "next").click()
    wait(browser).until(ec.text_to_be_present_in_element((By.ID, "step-label"), "decision 2 of"))
    assert browser.find_element(By.ID, "position").text != before
    played = browser.find_elements(By.CSS_SELECTOR, "#policy tr.played")
    assert len(played) == 1 and "(played)" in played[0].text
    shares = [float(r.find_elements(By.TAG_NAME, "td")[1].text)
              for r in browser.find_elements(By.CSS_SELECTOR, "#policy tr")[1:]]  # fmt: skip
    assert sum(shares) == pytest.approx(1.0, abs=0.01)
    browser.find_element(By.ID, "advise").click()
    wait(browser).until(ec.presence_of_element_located((By.ID, "advice-table")))
    assert "no champion network" in browser.find_element(By.ID, "advice").text
    ratings = browser.find_element(By.ID, "ratings").text
    assert "v1" in ratings and "1234" in ratings
    links = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#plots a")]
    assert links == ["rating.png"]
    screenshot(browser, "web-replay.png", tmp_path)
