"""The OpenSpiel-backed Hex GTP bot (tests/helpers/bots/hex_openspiel_gtp.py): its own GTP, and a
5x5 game against descent through both programs' GTP, every move checked by our kernel."""

from __future__ import annotations

import re
import sys

from descent.search_cy.games.registry import make_game
from tests.protocols.test_gtp import GtpProcess, descent

BOT = [sys.executable, "-m", "tests.helpers.bots.hex_openspiel_gtp", "--size", "5",
       "--simulations", "40", "--seed", "1"]
CELL = re.compile(r"= [a-e][1-5]")


def test_bot_speaks_its_gtp_subset() -> None:
    bot = GtpProcess(BOT)
    try:
        assert bot.ask("protocol_version") == "= 2"
        assert bot.ask("3 name") == "=3 openspiel-mcts-hex"
        assert bot.ask("version").startswith("= 1 (OpenSpiel MCTS")
        commands = bot.ask("list_commands")[2:].split("\n")
        assert {"boardsize", "clear_board", "play", "genmove", "quit"} <= set(commands)
        assert bot.ask("known_command genmove") == "= true"
        assert bot.ask("boardsize 5") == "= "
        assert bot.ask("play b c3") == "= "
        first = bot.ask("genmove w")
        assert CELL.fullmatch(first) and first != "= c3"
        assert bot.ask(f"play b {first[2:]}").startswith("? illegal move")
        assert bot.ask("play w a1").startswith("? white is not to move")
        assert bot.ask("play b f1").startswith("? illegal move")
        assert bot.ask("boardsize 5 6").startswith("? ")
        assert bot.ask("frobnicate").startswith("? unknown command")
        second = bot.ask("genmove b")
        assert CELL.fullmatch(second) and second not in ("= c3", first)
        assert bot.ask("clear_board") == "= "
        assert bot.ask("play b c3") == "= "
    finally:
        assert bot.close() == 0


def test_descent_against_the_openspiel_bot_on_5x5() -> None:
    """Descent plays Black; every move of either program is applied to our kernel, which
    rejects an illegal one; both programs must agree on the end."""
    state = make_game("hex(size=5)").new_initial_state()
    ours, bot = descent(), GtpProcess(BOT)
    try:
        assert ours.ask("param_descent move_time 0.2") == "= "
        assert bot.ask("boardsize 5") == "= "
        players = (ours, bot)
        while not state.is_terminal():
            colour = "bw"[state.current_player()]
            mover, other = players[state.current_player()], players[1 - state.current_player()]
            reply = mover.ask(f"genmove {colour}")
            assert CELL.fullmatch(reply), reply
            state.apply_move(reply[2:])
            assert other.ask(f"play {colour} {reply[2:]}") == "= "
        assert ours.ask("final_score") == ("= B+" if state.winner_colour() == 0 else "= W+")
        assert bot.ask("genmove b").startswith("? the game is over")
    finally:
        assert ours.close() == 0
        assert bot.close() == 0
