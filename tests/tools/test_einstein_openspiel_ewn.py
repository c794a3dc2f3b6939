"""The OpenSpiel-backed EinStein bot (tests/helpers/bots/einstein_openspiel_ewn.py): its moves are
legal for our kernel in both orientations, its errors change nothing, and it plays whole
games against our engine over the EWN dialect as subprocesses."""

from __future__ import annotations

import random
import sys

import pyspiel  # noqa: F401
import pytest

from descent.search_cy.games.einstein import EinsteinState  # noqa: E402
from descent.search_cy.games.registry import make_game  # noqa: E402
from tests.helpers.bots.einstein_openspiel_ewn import OpenSpielEwn  # noqa: E402
from tests.protocols.test_ewn import Session, engine_command  # noqa: E402

BOT = [sys.executable, "-m", "tests.helpers.bots.einstein_openspiel_ewn", "--seed", "3"]


def reply(bot: OpenSpielEwn, line: str) -> str:
    text = bot.handle(line)
    assert text is not None and text.endswith("\n\n"), text
    return text[:-2]


@pytest.mark.parametrize("first", ["red", "blue"])
@pytest.mark.parametrize("policy", ["expectiminimax", "mcts", "random"])
def test_bot_moves_are_legal_for_our_kernel(first: str, policy: str) -> None:
    kernel = make_game(f"einstein(setup=free,first={first})").new_initial_state()
    assert isinstance(kernel, EinsteinState)
    bot = OpenSpielEwn(seed=2, policy=policy, simulations=50)
    rng = random.Random(first + policy)
    assert reply(bot, "clear_board") == "= "
    red = reply(bot, "gensetup red")[2:]
    kernel.apply_move(red)
    assert reply(bot, "setup blue 17") == "= "
    kernel.apply_action(17)
    moves = 0
    while not kernel.is_terminal():
        colour = ("red", "blue")[kernel.side_to_act]
        die = rng.randint(1, 6)
        kernel.apply_move(f"d{die}")
        legal = [kernel.action_to_string(a) for a in kernel.legal_actions()]
        if moves % 2:
            move = rng.choice(legal)
            assert reply(bot, f"play {colour} {die} {move}") == "= "
        else:
            move = reply(bot, f"genmove {colour} {die}")[2:]
            assert move in legal
        kernel.apply_move(move)
        moves += 1
        assert reply(bot, "final_score") == ("= cannot score" if not kernel.is_terminal()
                                             else "= R+" if kernel.winner_colour() == 0
                                             else "= B+")
    assert reply(bot, "genmove red 1").startswith("? ")


def test_bot_refuses_bad_input_and_keeps_its_position() -> None:
    bot = OpenSpielEwn(seed=1)
    assert reply(bot, "setup red a1 b1 c1 a2 b2 e5").startswith("? ")
    assert reply(bot, "setup red 800").startswith("? ")
    assert reply(bot, "play red 3 c1c2").startswith("? red has not set up")
    assert reply(bot, "setup red 0") == "= "
    assert reply(bot, "play red 3 a1b1").startswith("? illegal move a1b1")
    assert reply(bot, "play red 3 c1c2") == "= "   # Blue: Red's mirror (setup=mirror)
    board = reply(bot, "showboard")
    assert reply(bot, "play red 3 c2c3").startswith("? it is not red's turn")
    assert reply(bot, "play blue 9 c5c4").startswith("? bad die")
    assert reply(bot, "frobnicate").startswith("? unknown command")
    assert reply(bot, "showboard") == board
    assert bot.handle("# comment") is None
    assert reply(bot, "7 name") == "=7 openspiel-ewn"
    assert reply(bot, "known_command genmove") == "= true"
    assert reply(bot, "quit") == "= " and not bot.running


def test_bot_plays_our_engine_through_the_protocol() -> None:
    """A small referee: our engine and the bot, both subprocesses, every move checked by
    our kernel, one game with each of them as Red."""
    for ours in ("red", "blue"):
        kernel = make_game("einstein(setup=free)").new_initial_state()
        assert isinstance(kernel, EinsteinState)
        engine = Session(engine_command("ewn", "einstein(setup=free)"))
        bot = Session(BOT)
        players = {ours: engine, ("blue" if ours == "red" else "red"): bot}
        rng = random.Random(ours)
        try:
            for colour in ("red", "blue"):
                arrangement = players[colour].gtp(f"gensetup {colour}")[2:]
                other = engine if players[colour] is bot else bot
                assert other.gtp(f"setup {colour} {arrangement}") == "= "
                kernel.apply_move(arrangement)
            while not kernel.is_terminal():
                colour = ("red", "blue")[kernel.side_to_act]
                die = rng.randint(1, 6)
                answer = players[colour].gtp(f"genmove {colour} {die}")
                assert answer.startswith("= "), answer
                move = answer[2:]
                kernel.apply_move(f"d{die}")
                assert kernel.string_to_action(move) in kernel.legal_actions(), move
                kernel.apply_move(move)
                other = engine if players[colour] is bot else bot
                assert other.gtp(f"play {colour} {die} {move}") == "= "
            expected = "= R+" if kernel.winner_colour() == 0 else "= B+"
            assert engine.gtp("final_score") == expected
            assert bot.gtp("final_score") == expected
            for session in (engine, bot):
                session.send("quit")
                assert session.close() == 0
        finally:
            for session in (engine, bot):
                if session.proc.poll() is None:
                    session.proc.kill()
