"""The web server's JSON API (Starlette's TestClient, the real app, real shards of a tiny run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from replay_helpers import PNG, make_run
from starlette.testclient import TestClient

from omega_cluster.cli import main
from omega_cluster.play.web.app import create_app
from omega_cluster.play.web.server import BindError, bind, check_host

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return make_run(tmp_path / "runs", games=3)


@pytest.fixture
def client(run: Path) -> TestClient:
    return TestClient(create_app(run.parent))


def new_table(client: TestClient, **body: object) -> dict:
    response = client.post("/api/tables", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_pages_and_games_are_served(client: TestClient) -> None:
    for page, marker in (("/", 'id="new-table"'), ("/replay", 'id="policy"')):
        response = client.get(page)
        assert response.status_code == 200 and marker in response.text
    assert client.get("/static/table.js").status_code == 200
    info = client.get("/api/games").json()
    names = [g["name"] for g in info["games"]]
    assert {"kuhn_poker", "mexican_train", "goofspiel"} <= set(names)
    assert "commander" in info["players"] and "champion" in info["players"]


def test_a_new_table_waits_for_the_person_and_hides_the_other_hand(client: TestClient) -> None:
    table = new_table(client, game="kuhn_poker", seats="random,you", seed=3)
    assert table["seats"] == ["random", "you"] and table["humans"] == [1]
    assert table["params"] == {"players": 2}  # players defaults to the number of seats
    assert table["waiting_for"] == 1 == table["seat"]
    assert [m[2] for m in table["view"]["legal"]] == ["pass", "bet"]
    # the bot at seat 0 moved first and its move is shown; the deals are only "chance"
    moves = [e for e in table["events"] if not e["chance"]]
    assert [e["seat"] for e in moves] == [0]
    assert all(
        set(e) == {"seat", "player", "name", "chance"} for e in table["events"] if e["chance"]
    )
    cards = _cards(client, table["id"])
    ranks = client.app.state.tables.get(table["id"]).session.game.ranks
    mine, theirs = (row["cards"] for row in table["view"]["rows"][::-1])
    assert mine == [{"face": ranks[cards[1]], "action": None}]
    assert theirs == [{"face": None, "action": None}]  # face down
    text = json.dumps(table)
    assert f'"face": "{ranks[cards[0]]}"' not in text and table["final"] is None
    assert "P0:" not in text  # the full render (every card) is not sent before the end


def _cards(client: TestClient, table_id: str) -> list[int]:
    """The true cards, read from the server's own session: what the page must not get."""
    return list(client.app.state.tables.get(table_id).session.state._cards)


def test_a_move_by_number_or_name_then_the_bots_play_until_the_end(client: TestClient) -> None:
    table = new_table(client, game="kuhn_poker", seats="you,random", seed=1)
    response = client.post(f"/api/tables/{table['id']}/move", json={"move": "pass"})
    assert response.status_code == 200
    after = response.json()
    names = [(e["seat"], e["name"]) for e in after["events"] if not e["chance"]]
    assert names[0] == (0, "pass") and names[1][0] == 1
    while not after["over"]:
        after = client.post(f"/api/tables/{table['id']}/move", json={"move": 0}).json()
    assert after["result"]["returns"][0] == -after["result"]["returns"][1] != 0
    assert "P0:" in after["final"] and after["waiting_for"] is None
    late = client.post(f"/api/tables/{table['id']}/move", json={"move": 0})
    assert late.status_code == 400 and "game is over" in late.json()["error"]


def test_an_illegal_move_is_400_on_one_line_and_changes_nothing(client: TestClient) -> None:
    table = new_table(client, game="kuhn_poker", seats="you,random", seed=2)
    before = client.get(f"/api/tables/{table['id']}").json()
    for move in ("raise", 7, -1, True, None, [0]):
        response = client.post(f"/api/tables/{table['id']}/move", json={"move": move})
        assert response.status_code == 400, move
        error = response.json()["error"]
        assert "\n" not in error and error, move
        if isinstance(move, (str, int)) and not isinstance(move, bool):
            assert "pass" in error and "bet" in error  # the legal moves are named
    assert client.get(f"/api/tables/{table['id']}").json() == before
    wrong_seat = client.post(f"/api/tables/{table['id']}/move", json={"seat": 1, "move": 0})
    assert wrong_seat.status_code == 400 and "not a person's seat" in wrong_seat.json()["error"]
    no_move = client.post(f"/api/tables/{table['id']}/move", json={"seat": 0})
    assert no_move.status_code == 400 and '"move"' in no_move.json()["error"]
    assert client.get(f"/api/tables/{table['id']}").json() == before


def test_a_real_move_that_is_not_legal_now_gets_the_contracts_message(client: TestClient) -> None:
    table = new_table(client, game="mexican_train", params={"double_set": 9, "rounds": 1},
                      seats="you,commander", seed=3)  # fmt: skip
    session = client.app.state.tables.get(table["id"]).session
    legal = {a for a, _ in session.legal(0)}
    illegal = next(a for a in range(session.game.spec.num_actions) if a not in legal)
    name = session.game.describe_action(illegal)
    response = client.post(f"/api/tables/{table['id']}/move", json={"move": name})
    assert response.status_code == 400
    error = response.json()["error"]
    assert f"mexican_train: illegal action {illegal} ({name}) for player 0" in error
    assert client.get(f"/api/tables/{table['id']}").json() == table


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"game": "no_such_game", "seats": "you,random"}, "unknown game 'no_such_game'"),
        ({"game": "kuhn_poker", "seats": "you,bogus"}, "unknown player 'bogus'"),
        ({"game": "kuhn_poker", "seats": "you,random,random", "params": {"players": 2}},
         "3 seats"),
        ({"game": "kuhn_poker", "seats": "you", "params": {"cards": 3}}, "unknown parameter"),
        ({"game": "kuhn_poker", "seats": "you,random", "seed": -1}, "seed must be an int"),
        ({"game": "kuhn_poker", "chairs": 2}, "unknown field(s) chairs"),
        ([1, 2], "a JSON object"),
    ],
)  # fmt: skip
def test_bad_new_table_requests_are_400_on_one_line(
    client: TestClient, body: object, words: str
) -> None:
    response = client.post("/api/tables", json=body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert words in error and "\n" not in error


def test_unknown_tables_and_malformed_bodies(client: TestClient) -> None:
    missing = client.get("/api/tables/nope")
    assert missing.status_code == 404 and "no table 'nope'" in missing.json()["error"]
    bad = client.post(
        "/api/tables", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert bad.status_code == 400 and "not JSON" in bad.json()["error"]


def test_the_advisor_answers_for_the_person_to_move(client: TestClient) -> None:
    table = new_table(client, game="kuhn_poker", seats="you,random", seed=4)
    advice = client.get(f"/api/tables/{table['id']}/advice").json()
    assert advice["seat"] == 0 and [m["name"] for m in advice["moves"]] == ["pass", "bet"]
    assert advice["champion"] is None and "no champion" in advice["note"]
    thought = client.get(f"/api/tables/{table['id']}/advice?think=20").json()
    visits = [m["visits"] for m in thought["moves"]]
    assert thought["think"] == 20 and sum(visits) == pytest.approx(1.0)
    bad = client.get(f"/api/tables/{table['id']}/advice?think=lots")
    assert bad.status_code == 400 and "think must be an int" in bad.json()["error"]


def test_runs_games_and_positions(client: TestClient, run: Path) -> None:
    runs = client.get("/api/runs").json()["runs"]
    assert [(r["name"], r["game"], r["plots"], r["ratings"]) for r in runs] == [
        (run.name, "kuhn_poker", ["rating.png"], True)
    ]
    games = client.get(f"/api/runs/{run.name}/games").json()["games"]
    assert [g["game_id"] for g in games] == ["kuhn-0", "kuhn-1", "kuhn-2"]
    data = client.get(f"/api/runs/{run.name}/games/kuhn-1").json()
    assert data["game"]["seed"] == 101 and len(data["positions"]) == data["game"]["decisions"]
    first = data["positions"][0]
    assert first["seat"] == 0 and first["text"].startswith("Kuhn poker")
    assert sum(m["policy"] for m in first["moves"]) == pytest.approx(1.0, abs=1e-3)
    advice = client.get(f"/api/runs/{run.name}/games/kuhn-1/advice?step=1").json()
    assert advice["seat"] == data["positions"][1]["seat"]
    assert advice["champion"] is None and advice["note"].endswith("has no models yet")
    ratings = client.get(f"/api/runs/{run.name}/ratings").json()
    assert ratings["ratings"][0]["elo"] == 1234.0 and ratings["gates"][0]["promoted"] is True
    plot = client.get(f"/runs/{run.name}/plots/rating.png")
    assert plot.status_code == 200 and plot.content == PNG
    assert plot.headers["content-type"] == "image/png"


def test_unknown_game_ids_runs_and_plots_are_404_on_one_line(client: TestClient, run: Path) -> None:
    response = client.get(f"/api/runs/{run.name}/games/kuhn-99")
    assert response.status_code == 404
    error = response.json()["error"]
    assert "'kuhn-99' is not in the shards of run" in error and str(run) in error
    assert "\n" not in error
    step = client.get(f"/api/runs/{run.name}/games/kuhn-0/advice?step=50")
    assert step.status_code == 404 and "no decision 50" in step.json()["error"]
    other = client.get("/api/runs/other/games")
    assert other.status_code == 404 and "no run named 'other'" in other.json()["error"]
    for name in ("config.yaml", "..%2Fpipeline.json", "missing.png"):
        assert client.get(f"/runs/{run.name}/plots/{name}").status_code == 404
    assert client.get(f"/runs/{run.name}/plots/rating.png/../../pipeline.json").status_code == 404


def test_one_run_directory_is_a_catalogue_of_itself(run: Path) -> None:
    client = TestClient(create_app(run))
    assert [r["name"] for r in client.get("/api/runs").json()["runs"]] == [run.name]
    assert TestClient(create_app(None)).get("/api/runs").json() == {"runs": []}


def test_non_loopback_binds_are_refused_unless_asked_for(capsys: pytest.CaptureFixture) -> None:
    assert check_host("127.0.0.1", explicit=False) is True
    assert check_host("localhost", explicit=False) is True
    with pytest.raises(BindError) as err:
        check_host("0.0.0.0", explicit=False)
    assert "refusing to listen on 0.0.0.0" in str(err.value) and "host=0.0.0.0" in str(err.value)
    assert check_host("0.0.0.0", explicit=True) is False
    taken = bind("127.0.0.1", 0)
    try:
        port = taken.getsockname()[1]
        with pytest.raises(BindError, match=f"cannot listen on 127.0.0.1:{port}"):
            bind("127.0.0.1", port)
        assert main(["serve", f"port={port}"]) == 2
        assert f"127.0.0.1:{port}" in capsys.readouterr().err
    finally:
        taken.close()
    assert main(["serve", "host=no.such.host.invalid"]) == 2
    assert "host=no.such.host.invalid: not an address" in capsys.readouterr().err
    assert main(["serve", "port=70000"]) == 2
    assert main(["serve", "runs=/no/such/dir"]) == 2
    assert main(["serve", "colour=red"]) == 2
    assert "unknown key 'colour'; serve keys: runs, host, port" in capsys.readouterr().err


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real smoke training run of Kuhn poker (its self-play shards, its champion), ~15 s."""
    run = tmp_path_factory.mktemp("smoke") / "kuhn-smoke"
    command = [sys.executable, "-m", "omega_cluster", "train", "run=smoke", "game=kuhn_poker",
               "cluster=inprocess", "run.iterations=1", "run.games_per_iteration=8",
               "gate.anchor_games=4", "gate.games_per_slice=4", "run.progress=false",
               "tracking.enabled=false", f"run.dir={run}"]  # fmt: skip
    subprocess.run(command, check=True, cwd=ROOT, capture_output=True, timeout=300)
    return run


@pytest.mark.xdist_group("web_smoke_run")  # one smoke training for both tests
def test_a_training_runs_games_replay_with_its_champion_beside_each_move(smoke_run: Path) -> None:
    client = TestClient(create_app(smoke_run))
    games = client.get(f"/api/runs/{smoke_run.name}/games").json()["games"]
    assert len(games) >= 8 and all(g["game"] == "kuhn_poker" for g in games)
    game = games[0]
    data = client.get(f"/api/runs/{smoke_run.name}/games/{game['game_id']}").json()
    assert len(data["positions"]) == game["decisions"] >= 1
    for p in data["positions"]:
        assert sum(m["policy"] for m in p["moves"]) == pytest.approx(1.0, abs=1e-3)
        assert p["action_name"] in {m["name"] for m in p["moves"]}
    advice = client.get(f"/api/runs/{smoke_run.name}/games/{game['game_id']}/advice?step=0")
    assert advice.status_code == 200, advice.text
    answer = advice.json()
    assert answer["champion"].startswith(f"champion:{smoke_run.name}:v") and answer["note"] is None
    assert sum(m["policy"] for m in answer["moves"]) == pytest.approx(1.0, abs=1e-4)


@pytest.mark.xdist_group("web_smoke_run")
def test_a_champion_seat_advises_and_a_champion_of_another_game_is_400(smoke_run: Path) -> None:
    client = TestClient(create_app(None))
    table = new_table(client, game="kuhn_poker", seats=f"you,champion:{smoke_run}", seed=0)
    advice = client.get(f"/api/tables/{table['id']}/advice").json()
    assert advice["champion"].startswith("champion:") and advice["value"] is not None
    other = client.post(
        "/api/tables", json={"game": "leduc_poker", "seats": f"you,champion:{smoke_run}"}
    )
    assert other.status_code == 400
    assert "trained kuhn_poker" in other.json()["error"] and "leduc_poker" in other.json()["error"]
