"""The web table and the game viewer in a real headless Chromium (Selenium, Debian's chromium and
chromedriver, no Selenium Manager downloads), against the real server (uvicorn on a free
loopback port, in a thread).

One browser for the module. A game of Mexican Train against three Commanders is played to its
end by clicks on the drawing: a tile with one place to go is played by one click, a tile with
several lights them and waits for the click on one, a tile that cannot go anywhere does nothing,
draw and pass are buttons; every train on the way reads from the engine outwards, each tile
turned to match; the advisor answers with bars. Kuhn poker, Goofspiel and an OpenSpiel game are
played by clicks on their cards, bids and buttons. The game viewer replays a recorded game from
real Arrow shards step by step, drawn as the table draws it, with the visit distribution as bars.
The table mid-game and the viewer are photographed; with ``WEB_SCREENSHOT_DIR=docs`` the
pictures are written there (``docs/table.png``, ``docs/viewer.png``: the README's and
docs/playing.md's), else under the test's tmp dir.
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
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.ui import WebDriverWait

from omega_cluster.play.web.app import create_app
from omega_cluster.play.web.server import bind

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
import itertools

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


def start_table(browser: WebDriver, server: str, game: str, params: str, seats: str) -> None:
    browser.get(server + "/")
    wait(browser).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#game-list option")) >= 4)
    for field, value in (("game", game), ("params", params), ("seed", "5"), ("seats", seats)):
        box = browser.find_element(By.ID, field)
        box.clear()
        box.send_keys(value)
    browser.find_element(By.ID, "start").click()
    wait(browser).until(lambda d: version(d) >= 1)


def version(driver: WebDriver) -> int:
    """How many times the table was drawn (the page bumps it on every answer of the server)."""
    return int(driver.find_element(By.ID, "board").get_attribute("data-version") or 0)


def click_and_wait(driver: WebDriver, element: WebElement) -> None:
    """Click what plays a move and wait for the table drawn after the server's answer."""
    before = version(driver)
    element.click()
    wait(driver, 30).until(lambda d: version(d) > before or d.find_element(By.ID, "error").text)
    assert driver.find_element(By.ID, "error").text == ""


def events(driver: WebDriver) -> list[str]:
    return [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#events li")]


def trains(driver: WebDriver) -> dict[str, list[str]]:
    """Each train's tiles as drawn (its ``data-tile`` names, from the engine outwards)."""
    return {
        row.get_attribute("data-train"): [
            t.get_attribute("data-tile") for t in row.find_elements(By.CSS_SELECTOR, "g.laid")
        ]
        for row in driver.find_elements(By.CSS_SELECTOR, "#board-svg g.train")
    }


def assert_turned_to_match(driver: WebDriver) -> None:
    engine = driver.find_element(By.CSS_SELECTOR, "#board-svg g.engine").get_attribute("data-tile")
    start = int(engine.split("|")[0])
    for slot, names in trains(driver).items():
        pairs = [tuple(int(x) for x in n.split("|")) for n in names]
        if names and len(names) < 10:  # the whole train is drawn: it starts at the engine
            assert pairs[0][0] == start, (slot, names)
        for (_, far), (near, _) in itertools.pairwise(pairs):
            assert near == far, (slot, names)


def test_a_game_of_mexican_train_is_played_to_its_end_by_clicks(
    server: str, browser: WebDriver, tmp_path: Path
) -> None:
    start_table(browser, server, "mexican_train", "double_set=9, rounds=1",
                "you,commander,commander,commander")  # fmt: skip
    status = browser.find_element(By.ID, "status").text
    assert "mexican_train" in status and "your move (seat 0)" in status
    assert "boneyard" in browser.find_element(By.ID, "hand-svg").text
    one_click = several = photographed = 0
    for _turn in range(120):
        if "game over" in browser.find_element(By.ID, "status").text:
            break
        assert_turned_to_match(browser)
        playable = browser.find_elements(By.CSS_SELECTOR, "#hand-svg g.hand-tile.playable")
        idle = browser.find_elements(By.CSS_SELECTOR, "#hand-svg g.hand-tile.idle")
        if idle:  # a tile that can go nowhere: a click on it changes nothing
            before = version(browser)
            idle[0].click()
            assert version(browser) == before and not browser.find_elements(
                By.CSS_SELECTOR, "g.slot.lit"
            )
        if not playable:  # draw or pass: the buttons under the drawing
            buttons = browser.find_elements(By.CSS_SELECTOR, "#moves button.move")
            assert buttons and {b.text for b in buttons} <= {"draw", "pass"}
            name = buttons[0].text
            click_and_wait(browser, buttons[0])
            assert f"seat 0 (you): {name}" in events(browser)
            continue
        tile = playable[0].get_attribute("data-tile")
        before = version(browser)
        playable[0].click()
        lit = browser.find_elements(By.CSS_SELECTOR, "#board-svg g.slot.lit")
        if lit:  # several places to go: lit, nothing played until one is clicked
            assert len(lit) >= 2 and version(browser) == before
            assert "selected" in playable[0].get_attribute("class")
            if not photographed and len(events(browser)) >= 16:
                advise(browser, think=30)
                screenshot(browser, "table.png", tmp_path)
                photographed += 1
            train = lit[-1].get_attribute("data-train")
            click_and_wait(browser, lit[-1])
            mine = [e for e in events(browser) if e.startswith("seat 0 (you):")][-1]
            assert mine.startswith(f"seat 0 (you): {tile} on ")
            assert ("Mexican" if train == "8" else f"seat {train}'s") in mine
            several += 1
        else:  # one place to go: played by the one click
            wait(browser, 30).until(lambda d, v=before: version(d) > v)
            mine = [e for e in events(browser) if e.startswith("seat 0 (you):")][-1]
            assert mine.startswith(f"seat 0 (you): {tile} on ")
            one_click += 1
    status = browser.find_element(By.ID, "status").text
    assert "game over" in status, status
    assert one_click >= 1 and several >= 1 and photographed == 1
    rows = browser.find_elements(By.CSS_SELECTOR, "#returns tr")
    assert len(rows) == 5 and "you" in rows[1].text  # a header, then the four seats
    assert browser.find_element(By.ID, "advise").get_attribute("disabled")


def advise(browser: WebDriver, think: int) -> None:
    """Ask the advisor (with a search of ``think`` simulations) and check its bars."""
    box = browser.find_element(By.ID, "think")
    box.clear()
    box.send_keys(str(think))
    browser.find_element(By.ID, "advise").click()
    table = wait(browser, 60).until(ec.presence_of_element_located((By.ID, "advice-table")))
    rows = table.find_elements(By.TAG_NAME, "tr")[1:]
    moves = browser.find_elements(By.CSS_SELECTOR, "#hand-svg g.hand-tile.playable")
    assert len(rows) >= len(moves) >= 1
    assert len(table.find_elements(By.CSS_SELECTOR, ".bar")) >= 2 * len(rows)  # visits, score
    assert len(table.find_elements(By.CSS_SELECTOR, "tr.chosen")) == 1
    why = browser.find_element(By.ID, "advice-text").text
    assert why.startswith("why: ")
    named = browser.find_elements(By.CSS_SELECTOR, "#advice-why .why-row")
    assert named or "is the only move" in why  # a bar for each term the why names
    assert "no term differs" not in why


def test_card_games_are_played_by_clicks_on_cards_and_bets(server: str, browser: WebDriver) -> None:
    start_table(browser, server, "kuhn_poker", "", "you,heuristic")
    rows = browser.find_elements(By.CSS_SELECTOR, ".cards-view .row")
    mine, theirs = rows[0], rows[1]
    assert "seat 0 · you" in mine.text and mine.find_element(By.CSS_SELECTOR, ".card").text
    assert theirs.find_elements(By.CSS_SELECTOR, ".card.back")  # the other card face down
    bets = {b.text: b for b in browser.find_elements(By.CSS_SELECTOR, "#moves button.move")}
    assert set(bets) == {"pass", "bet"}
    click_and_wait(browser, bets["bet"])
    assert events(browser)[0] == "seat 0 (you): bet"
    assert "game over" in browser.find_element(By.ID, "status").text  # the heuristic answered
    assert "pot" in browser.find_element(By.CSS_SELECTOR, ".cards-view").text

    start_table(browser, server, "goofspiel", "num_cards=4", "you,random")
    for turn in range(1, 4):
        prize = browser.find_element(By.CSS_SELECTOR, ".cards-view .row .card").text
        assert prize  # the prize being bid for
        cards = browser.find_elements(By.CSS_SELECTOR, ".card.playable")
        assert len(cards) == 5 - turn  # the own hand; the last card is bid by itself
        bid = cards[-1].get_attribute("data-face")
        click_and_wait(browser, cards[-1])
        assert f"seat 0 (you): bid {bid}" in events(browser)
    assert "game over" in browser.find_element(By.ID, "status").text

    start_table(browser, server, "openspiel:tic_tac_toe", "", "you,random")
    for _ in range(5):
        if "game over" in browser.find_element(By.ID, "status").text:
            break
        assert browser.find_element(By.CSS_SELECTOR, "pre.board").text  # the board, drawn
        click_and_wait(browser, browser.find_elements(By.CSS_SELECTOR, "#moves button.move")[0])
    assert "game over" in browser.find_element(By.ID, "status").text


def test_the_viewer_replays_a_recorded_game_drawn_as_the_table_draws_it(
    server: str, browser: WebDriver, tmp_path: Path
) -> None:
    browser.get(server + "/replay")
    wait(browser).until(lambda d: len(Select(d.find_element(By.ID, "games")).options) == 2)
    Select(browser.find_element(By.ID, "games")).select_by_value("mexican-1")
    browser.find_element(By.ID, "load").click()
    wait(browser).until(ec.text_to_be_present_in_element((By.ID, "step-label"), "decision 1 of"))
    info = browser.find_element(By.ID, "game-info").text
    assert info.startswith("mexican-1: mexican_train") and "seed 101" in info
    name = ""
    for step in range(2, 40):  # a few decisions in, to one that lays a tile on a train
        browser.find_element(By.ID, "next").click()
        wait(browser).until(
            ec.text_to_be_present_in_element((By.ID, "step-label"), f"decision {step} of")
        )
        played = browser.find_elements(By.CSS_SELECTOR, "#policy tr.played")
        assert len(played) == 1 and "(played)" in played[0].text
        name = played[0].text.split("  (played)")[0]
        if step >= 8 and " on " in name and sum(map(len, trains(browser).values())) >= 4:
            break
    assert_turned_to_match(browser)
    # the tile played is lit in the hand and at the end of its train
    tile = browser.find_element(By.CSS_SELECTOR, "#hand-svg g.hand-tile.played")
    assert name.startswith(tile.get_attribute("data-tile") + " on ")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#board-svg g.slot.played")) == 1
    shares = [float(r.find_element(By.CSS_SELECTOR, ".num").text)
              for r in browser.find_elements(By.CSS_SELECTOR, "#policy tr")[1:]]  # fmt: skip
    assert sum(shares) == pytest.approx(1.0, abs=0.01)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#policy .bar")) == len(shares)
    browser.find_element(By.ID, "advise").click()
    wait(browser).until(ec.presence_of_element_located((By.ID, "advice-table")))
    assert "no champion network" in browser.find_element(By.ID, "advice").text
    ratings = browser.find_element(By.ID, "ratings").text
    assert "v1" in ratings and "1234" in ratings
    links = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#plots a")]
    assert links == ["rating.png"]
    screenshot(browser, "viewer.png", tmp_path)
