"""The advisor's known answers on Mexican Train positions reached by replaying seeds.

Positions come from Commander self-play of fixed seeds; each test picks the ones where the right
move is clear and checks the term the advisor names first for the chosen move against the
runner-up: the move that goes out (``goes_out``), the only move that covers an open double under
lenient doubles (``cover_double``), and, with the boneyard empty, the heaviest of moves that
differ only in pips (``endgame_dump``, or ``stranded_pips`` where laying it strands fewer pips). Without a champion the terms are the Commander's own; a
constructed network whose logits follow the Commander's score (or one term alone) checks that the
ridge attribution of a network's logits names the same terms and reports a high R². A real small
network checks the numbers a person sees (policy sums to 1, visit shares, JSON). When a search
ran, its two most visited moves are explained, and a search that chooses against the terms is
explained by the terms against its choice, never by "no term differs".
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator

import numpy as np
import pytest
import torch

from omega_cluster.games.api import State
from omega_cluster.games.mexican_train.officers import Commander
from omega_cluster.games.registry import make_game
from omega_cluster.model import ModelConfig, PolicyValueNet, encoder_for
from omega_cluster.model.inference import NetworkEvaluator
from omega_cluster.play.advisor import MoveAdvice, _explain, advise, attribute, load_champion
from omega_cluster.players.registry import PlayerSpecError
from omega_cluster.search.evaluators import LeafEvaluation

PIP_TERMS = {"dump_pips", "campaign_dump", "endgame_dump", "urgent_dump", "stranded_pips"}


def positions(game, seeds) -> Iterator[tuple[State, int]]:
    """Every decision with a choice in Commander self-play of ``seeds`` (copies)."""
    commander = Commander(game)
    for seed in seeds:
        state, rng = game.new_initial_state(seed), random.Random(seed)
        while not state.is_terminal():
            p = state.current_players[0]
            if len(state.legal_actions(p)) > 1:
                yield state.clone(), p
            state.apply_action(commander.act(state, p, rng))


class CommanderNet:
    """A constructed network: its move logits are ``scale`` × one term (or the whole score) of
    the Commander, its values uniform; the protocol of NetworkEvaluator.evaluate_positions."""

    name = "constructed"

    def __init__(self, game, *, scale: float = 0.2, term: str | None = None) -> None:
        self.commander, self.scale, self.term = Commander(game), scale, term

    def evaluate_positions(self, leaves):
        out = []
        for leaf in leaves:
            moves = {m.action: m for m in self.commander.explain(leaf.state, leaf.player)}
            scores = np.array([
                moves[a].terms[self.term] if self.term else moves[a].total for a in leaf.legal
            ])  # fmt: skip
            z = np.exp(self.scale * (scores - scores.max()))
            n = leaf.state.game.num_players
            out.append(LeafEvaluation((1.0 / n,) * n, tuple((z / z.sum()).tolist())))
        return out


def _top(advice) -> str:
    return advice.explanation.top_terms[0][0]


def test_the_move_that_goes_out_is_named_goes_out() -> None:
    game = make_game("mexican_train", players=4, rounds=1, must_play=False)  # a draw stays legal
    found = 0
    for state, p in positions(game, range(3)):
        if state.hand_sizes[p] != 1:
            continue
        outs = [a for a in state.legal_actions(p) if a < game.draw_action]
        if not outs:
            continue
        for champion in (None, CommanderNet(game)):
            advice = advise(game, state, p, champion=champion)
            assert advice.explanation.chosen in outs
            assert _top(advice) == "goes_out", advice.text
        found += 1
    assert found >= 2


def test_the_only_move_that_covers_an_open_double_is_named_cover_double() -> None:
    game = make_game("mexican_train", players=4, rounds=1, strict_doubles=False)
    found = 0
    for state, p in positions(game, range(4)):
        if not state.open_doubles:
            continue
        advice = advise(game, state, p)
        covers = [m.action for m in advice.moves if m.terms.get("cover_double", 0.0) > 0]
        if len(covers) != 1:
            continue
        assert advice.explanation.chosen == covers[0]
        assert _top(advice) == "cover_double", advice.text
        net = advise(game, state, p, champion=CommanderNet(game))
        assert net.explanation.chosen == covers[0] and _top(net) == "cover_double", net.text
        found += 1
    assert found >= 3


def test_in_the_endgame_the_heaviest_tile_is_dumped_and_named_endgame_dump() -> None:
    game = make_game("mexican_train", players=8, rounds=1)  # a small boneyard: it runs dry
    found = 0
    for state, p in positions(game, range(20)):
        if state.boneyard_size:
            continue
        advice = advise(game, state, p)
        e = advice.explanation
        moves = {m.action: m for m in advice.moves}
        chosen, runner = moves[e.chosen], moves[e.runner_up]
        differ = {t for t in chosen.terms if chosen.terms[t] != runner.terms[t]}
        if not differ or not differ <= PIP_TERMS:
            continue  # the two best moves differ in more than pips: not clear-cut
        assert chosen.terms["endgame_dump"] > runner.terms["endgame_dump"]  # the heavier tile
        # the pips laid (endgame_dump) or the pips this leaves stranded in hand: both say "dump"
        assert _top(advice) in ("endgame_dump", "stranded_pips"), advice.text
        assert "endgame_dump" in dict(e.top_terms), advice.text
        found += 1
    assert found >= 2


def test_the_ridge_fit_of_a_network_that_follows_one_term_names_that_term() -> None:
    game = make_game("mexican_train", players=4, rounds=1)
    net = CommanderNet(game, scale=1.0, term="playable_tiles")
    checked = 0
    for state, p in positions(game, range(3)):
        advice = advise(game, state, p, champion=net)
        e = advice.explanation
        moves = {m.action: m for m in advice.moves}
        gap = moves[e.chosen].terms["playable_tiles"] - moves[e.runner_up].terms["playable_tiles"]
        if gap < 0.5 or e.underdetermined:  # too few moves to tell the terms apart
            continue
        assert _top(advice) == "playable_tiles", advice.text
        assert e.r2 is not None and e.r2 > 0.95 and e.source == "network"
        checked += 1
    assert checked >= 3


def test_attribute_recovers_known_coefficients_and_reports_r2() -> None:
    rng = np.random.default_rng(0)
    contributions = rng.normal(size=(12, 3))
    logits = 2.0 * contributions[:, 1] + 0.1 * contributions[:, 2]
    e = attribute(logits, contributions, ["a", "b", "c"], int(np.argmax(logits)), 0)
    assert e.top_terms[0][0] == "b" and e.r2 > 0.999 and not e.underdetermined
    noise = attribute(rng.normal(size=12), contributions, ["a", "b", "c"], 0, 1)
    assert noise.r2 < 0.6  # logits the terms do not explain say so


def _tiny_network(game) -> NetworkEvaluator:
    encoder = encoder_for(game)
    torch.manual_seed(0)
    config = ModelConfig.for_encoder(
        encoder, game, hidden_size=32, num_layers=1, action_embedding_size=16,
        policy_hidden_size=16, value_hidden_size=16,
    )  # fmt: skip
    net = PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size)
    with torch.no_grad():
        for weight in net.parameters():
            weight.add_(torch.randn_like(weight) * 0.05)
    return NetworkEvaluator(net, encoder)


def test_a_real_network_gives_policy_values_visits_and_json() -> None:
    game = make_game("mexican_train", players=4, rounds=1)
    state, p = next(s for s in positions(game, [1]) if len(s[0].legal_actions(s[1])) >= 3)
    advice = advise(game, state, p, champion=_tiny_network(game), think=24)
    policy = [m.policy for m in advice.moves]
    assert abs(sum(policy) - 1.0) < 1e-6 and all(x > 0 for x in policy)
    assert abs(sum(m.visits for m in advice.moves) - 1.0) < 1e-9
    assert all(0.0 <= m.value <= 1.0 for m in advice.moves) and advice.value is not None
    assert advice.explanation.chosen in state.legal_actions(p)
    assert json.loads(json.dumps(advice.as_dict()))["moves"][0]["terms"]
    assert "why:" in advice.text


def test_bad_champions_and_positions_are_one_line_errors() -> None:
    game = make_game("mexican_train", players=4, rounds=1)
    with pytest.raises(PlayerSpecError, match="has no network"):
        load_champion(game, "commander")
    state = game.new_initial_state(0)
    other = (state.current_players[0] + 1) % 4
    with pytest.raises(Exception, match="no move to advise on"):
        advise(game, state, other)


def test_a_search_that_chooses_against_the_terms_names_the_terms_against_it() -> None:
    # the search's two most visited moves are the chosen and the runner-up; here it prefers
    # the move the heuristic ranks second: the terms favour the runner-up, and say so signed
    moves = [
        MoveAdvice(0, 10, "a", visits=0.20, total=5.0, terms={"x": 4.0, "y": 1.0}),
        MoveAdvice(1, 11, "b", visits=0.45, total=2.0, terms={"x": 1.0, "y": 1.0}),
        MoveAdvice(2, 12, "c", visits=0.35, total=-1.0, terms={"x": 0.0, "y": -1.0}),
    ]
    e = _explain(moves, None, [m.visits for m in moves])
    assert (e.chosen, e.runner_up) == (11, 12)  # by visits, not by the heuristic's score
    assert e.gap == 3.0 and e.top_terms == [("y", 2.0), ("x", 1.0)]
    e = _explain(moves[:2], None, [0.1, 0.9])  # b over a, the heuristic's best
    assert (e.chosen, e.runner_up) == (11, 10) and e.gap == -3.0
    assert e.top_terms == [("x", -3.0)]  # not "no term differs": x favours the runner-up
    text = e.text(make_game("mexican_train", players=4))
    assert "against the terms" in text and "x -3.00" in text and "no term differs" not in text


def test_with_a_search_the_why_line_names_a_term_whenever_the_terms_differ() -> None:
    game = make_game("mexican_train", players=4, double_set=9, rounds=1)
    checked = 0
    for state, p in itertools.islice(positions(game, range(2)), 0, 40, 5):
        advice = advise(game, state, p, think=60)
        e = advice.explanation
        moves = {m.action: m for m in advice.moves}
        chosen, runner = moves[e.chosen], moves[e.runner_up]
        if chosen.terms == runner.terms:
            continue
        assert e.top_terms and "no term differs" not in advice.text, advice.text
        visits = sorted((m.visits for m in advice.moves), reverse=True)
        assert (chosen.visits, runner.visits) == tuple(visits[:2])
        checked += 1
    assert checked >= 4
