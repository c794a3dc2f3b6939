"""Dice chess perft data (tests/data/dicechess_perft.txt) from the python-chess reference
(descent/tools/dicechess_reference.py). Regenerate (a few seconds to a minute)::

    python -m tests.helpers.gen_dicechess_perft
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import chess

from descent.tools.dicechess_reference import CASTLE_MODES, NOMOVE_MODES, reference_perft_per_die

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "dicechess_perft.txt"
# (name, FEN): the start position and positions with castling, en passant, promotions and
# pieces that cannot move (which exercise the nomove options).
POSITIONS: tuple[tuple[str, str], ...] = (
    ("start", chess.STARTING_FEN),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"),
    ("en-passant", "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"),
    ("promotion", "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1"),
    ("sparse", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"),
    ("castle-attacked", "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"),
)

# (position name, nomove, castle, max depth) rows of the data file.
PLAN: tuple[tuple[str, str, str, int], ...] = (
    ("start", "reroll", "king", 5),
    ("kiwipete", "reroll", "king", 4),
    ("en-passant", "reroll", "king", 3),
    ("promotion", "reroll", "king", 4),
    ("sparse", "reroll", "king", 4),
    ("castle-attacked", "reroll", "king", 3),
) + tuple(
    (name, nomove, castle, 2 if name in ("kiwipete", "castle-attacked") else 3)
    for name, _ in POSITIONS
    for nomove in NOMOVE_MODES
    for castle in CASTLE_MODES
    if (nomove, castle) != ("reroll", "king")
)

def read_data(path: Path = DATA_FILE) -> list[tuple[str, str, int, int, int, str]]:
    """Rows (nomove, castle, depth, die, leaves, fen) of the data file."""
    rows = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        nomove, castle, depth, die, leaves, fen = line.split(maxsplit=5)
        rows.append((nomove, castle, int(depth), int(die), int(leaves), fen))
    return rows


def generate() -> list[str]:
    fens = dict(POSITIONS)
    lines = [
        "# Dice chess perft, per die, from python-chess (tests/helpers/gen_dicechess_perft.py).",
        "# Regenerate: python -m tests.helpers.gen_dicechess_perft",
        "# Leaves after DEPTH player moves from the chance node of FEN when the first roll",
        "# is DIE; later rolls expanded over every outcome, unweighted (RULES.md rules).",
        "# fields: nomove castle depth die leaves fen",
    ]
    for name, nomove, castle, max_depth in PLAN:
        for depth in range(1, max_depth + 1):
            for die, leaves in sorted(
                    reference_perft_per_die(fens[name], depth, nomove, castle).items()):
                lines.append(f"{nomove} {castle} {depth} {die} {leaves} {fens[name]}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DATA_FILE, help="data file to write")
    args = parser.parse_args(argv)
    lines = generate()
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} lines to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
