"""Game records: SGF for Hex (as HexGui writes it), PGN with roll comments for dice chess,
a plain text record for EinStein; each with a reader that replays the game through our
kernels.

Every writer takes a referee ``GameRecord`` (or its JSON dict: the arena's games.jsonl
lines) whose moves are in the kernel's notation (RULES.md); every reader returns a
``ParsedRecord`` with the same move list, so ``replay(parsed.game, parsed.moves)`` rebuilds
the final position.

- Hex SGF: ``(;FF[4]GM[11]SZ[n]...;B[a1];W[swap-pieces];W[c3]...)``: cells are a column
  letter and a row number (HexGui's ``HexPoint`` names). The swap follows HexGui and MoHex:
  ``swap-pieces`` leaves the board as it is and the players exchange colours, so after it
  every kernel move of player p is written with the other colour and the transposed cell
  (the kernel's swap is the canonical one, RULES.md). PB/PW name the engines holding Black
  and White at the end of the game (after a swap the first mover plays White), so that RE
  and the names agree; GN holds the game spec, GC the first mover and the adjudication.
- Dice-chess PGN: ``[Variant "Dice Chess"]`` (RULES.md), each move preceded by its roll as
  a comment ``{[%roll 3]}`` (1 pawn .. 6 king), moves in SAN computed with our kernel (no
  check marks: dice chess has no check), ``--`` for a passed turn.
- EinStein text: ``[Tag "value"]`` lines, then ``setup red a1 b1 c1 a2 b2 a3`` lines and one
  line per turn, ``d3 red b2c3``.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any

from descent.protocols.sgf import sgf_main_line
from descent.search_cy.games.registry import make_game, parse_spec
from descent.search_cy.games.state import GameState

EXTENSIONS = {"hex": "sgf", "einstein": "txt", "dicechess": "pgn"}
EINSTEIN_COLOURS = ("red", "blue")


@dataclass
class ParsedRecord:
    """A record read back: the game spec, the players (player 0 first), the result
    (0, 1, None for a draw; ``finished`` False when the record gives none) and the moves in
    kernel notation, as in a referee GameRecord."""

    game: str
    first: str = ""
    second: str = ""
    winner: int | None = None
    finished: bool = False
    reason: str = ""
    moves: list[str] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)


def _as_dict(record: Any) -> dict[str, Any]:
    if is_dataclass(record) and not isinstance(record, type):
        return asdict(record)
    if isinstance(record, Mapping):
        return dict(record)
    raise TypeError(f"not a game record: {type(record).__name__}")


def replay(spec: str, moves: list[str]) -> GameState:
    """The state after a record's moves (set-ups, rolls ``dN`` and moves), each checked by
    the kernel; ValueError naming the first move that is not legal."""
    state = make_game(spec).new_initial_state()
    for i, move in enumerate(moves):
        try:
            action = state.string_to_action(move)
            allowed = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() \
                else state.legal_actions()
            if action not in allowed:
                raise ValueError("not legal here")
        except ValueError as exc:
            raise ValueError(f"move {i + 1} {move!r}: {exc}") from None
        state.apply_action(action)
    return state


def _today() -> str:
    return _dt.date.today().strftime("%Y.%m.%d")


# -- Hex: SGF ----------------------------------------------------------------------------

def _sgf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _transpose(cell: str, n: int) -> str:
    from descent.search_cy.games.hex import cell_name, parse_move

    action = parse_move(cell, n)
    if action >= n * n:
        return cell
    row, col = divmod(action, n)
    return str(cell_name(col * n + row, n))


_SGF_RESULT = {"normal": "", "resign": "R", "timeout": "T", "illegal": "F", "crash": "F",
               "protocol": "F"}


def hex_sgf(record: Any, event: str = "descent arena", round_: str = "",
            date: str | None = None) -> str:
    """The SGF text of a Hex game record (HexGui-readable)."""
    r = _as_dict(record)
    game = make_game(r["game"])
    n = int(game.params["size"])
    names = (str(r["first"]), str(r["second"]))
    state = game.new_initial_state()
    nodes: list[str] = []
    transposed = False
    for move in r["moves"]:
        player = state.current_player()
        action = state.string_to_action(move)
        state.apply_action(action)
        colour = "BW"[player ^ int(transposed)]
        if move == "swap":
            nodes.append(f";{colour}[swap-pieces]")
            transposed = True
        else:
            nodes.append(f";{colour}[{_transpose(move, n) if transposed else move}]")
    winner = r.get("winner")
    reason = str(r.get("reason", "normal"))
    if winner is None:
        result = "0" if reason == "normal" else "Void"
    else:
        result = "BW"[int(winner) ^ int(transposed)] + "+" + _SGF_RESULT.get(reason, "")
    if reason == "resign" and winner is not None:
        nodes.append(f";{'BW'[(1 - int(winner)) ^ int(transposed)]}[resign]")
    black, white = (names[1], names[0]) if transposed else names
    comment = f"first move: {names[0]}; seed {r.get('seed', 0)}; end: {reason}"
    if r.get("detail"):
        comment += f" ({r['detail']})"
    root = (f"(;FF[4]AP[descent]GM[11]SZ[{n}]GN[{_sgf_escape(game.spec)}]"
            f"EV[{_sgf_escape(event)}]RO[{_sgf_escape(round_)}]DT[{date or _today()}]"
            f"PB[{_sgf_escape(black)}]PW[{_sgf_escape(white)}]RE[{result}]"
            f"GC[{_sgf_escape(comment)}]")
    lines = [root]
    line = ""
    for node in nodes:                  # HexGui wraps its lines at about 72 characters
        if len(line) + len(node) > 72:
            lines.append(line)
            line = ""
        line += node
    lines.append(line + ")")
    return "\n".join(x for x in lines if x) + "\n"


def read_hex_sgf(text: str) -> ParsedRecord:
    """Reads a Hex SGF (ours or HexGui's) back into kernel moves, checked by the kernel."""
    nodes = sgf_main_line(text)
    if not nodes:
        raise ValueError("SGF: empty game tree")
    root = dict(nodes[0])
    if root.get("GM", "11") != "11":
        raise ValueError(f"SGF: GM[{root['GM']}] is not Hex (11)")
    size_text = root.get("SZ", "11")
    if ":" in size_text:
        w, h = size_text.split(":", 1)
        if w != h:
            raise ValueError(f"SGF: non-square board {size_text}")
        size_text = w
    n = int(size_text)
    moves_wire = [(k, v.strip().lower()) for node in nodes for k, v in node
                  if k in ("B", "W")]
    swapped = any(v.startswith("swap") for _, v in moves_wire)
    spec = f"hex(size={n},swap={'true' if swapped else 'false'})"
    if "GN" in root:
        try:
            name, _ = parse_spec(root["GN"])
            if name == "hex":
                spec = make_game(root["GN"]).spec
        except ValueError:
            pass
    state = make_game(spec).new_initial_state()
    moves: list[str] = []
    transposed = False
    resigned: int | None = None
    for colour, value in moves_wire:
        player = "BW".index(colour) ^ int(transposed)
        if value == "resign":
            resigned = player
            break
        if state.is_terminal():
            raise ValueError(f"SGF: {colour}[{value}] after the end of the game")
        if player != state.current_player():
            raise ValueError(f"SGF: {colour}[{value}] out of turn")
        if value in ("swap", "swap-pieces", "swap-sides"):
            move = "swap"
        else:
            move = _transpose(value, n) if transposed else value
        action = state.string_to_action(move)
        if action not in state.legal_actions():
            raise ValueError(f"SGF: {colour}[{value}] is not legal")
        state.apply_action(action)
        moves.append(state.action_to_string(action) if move != "swap" else "swap")
        if move == "swap":
            transposed = True
    names = (root.get("PB", ""), root.get("PW", ""))
    first, second = (names[1], names[0]) if transposed else names
    parsed = ParsedRecord(spec, first, second, moves=moves, tags=root)
    result = root.get("RE", "")
    if result[:2] in ("B+", "W+"):
        parsed.winner = "BW".index(result[0]) ^ int(transposed)
        parsed.finished = True
        parsed.reason = {"R": "resign", "T": "timeout", "F": "forfeit"}.get(result[2:3],
                                                                            "normal")
    elif resigned is not None:
        parsed.winner, parsed.finished, parsed.reason = 1 - resigned, True, "resign"
    elif state.is_terminal():
        parsed.winner = 0 if state.terminal_value() > 0 else 1
        parsed.finished, parsed.reason = True, "normal"
    return parsed


# -- EinStein: plain text ------------------------------------------------------------------

def einstein_text(record: Any, event: str = "descent arena", round_: str = "",
                  date: str | None = None) -> str:
    """A plain text EinStein record: tags, set-ups, then one line per turn."""
    r = _as_dict(record)
    game = make_game(r["game"])
    state = game.new_initial_state()
    winner = r.get("winner")
    reason = str(r.get("reason", "normal"))
    result = "draw" if winner is None else EINSTEIN_COLOURS[int(winner)]
    if winner is None and reason != "normal":
        result = "none"
    tags = [("Event", event), ("Round", round_), ("Date", date or _today()),
            ("Game", game.spec), ("Red", str(r["first"])), ("Blue", str(r["second"])),
            ("Seed", str(r.get("seed", 0))), ("Result", result), ("Termination", reason)]
    if r.get("detail"):
        tags.append(("Detail", str(r["detail"])))
    lines = [_tag_line(k, v) for k, v in tags]
    lines.append("")
    die = ""
    from descent.search_cy.games.einstein import EinsteinState

    for move in r["moves"]:
        action = state.string_to_action(move)
        if isinstance(state, EinsteinState) and state.phase_name == "setup":
            side = int(state.side_to_act)
            state.apply_action(action)
            lines.append(f"setup {EINSTEIN_COLOURS[side]} {move}")
            continue
        if state.is_chance_node():
            die = move
            state.apply_action(action)
            continue
        player = state.current_player()
        state.apply_action(action)
        lines.append(f"{die} {EINSTEIN_COLOURS[player]} {move}")
        die = ""
    if die:
        lines.append(die)
    return "\n".join(lines) + "\n"


_TAG = re.compile(r'^\[(\w+)\s+"((?:\\.|[^"\\])*)"\]\s*$')


def _tag_line(key: str, value: str) -> str:
    """A PGN tag pair; quotes and backslashes escaped as PGN says, newlines flattened."""
    text = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    return f'[{key} "{text}"]'


def _read_tag(line: str) -> tuple[str, str] | None:
    m = _TAG.match(line.strip())
    if not m:
        return None
    return m.group(1), re.sub(r"\\(.)", r"\1", m.group(2))


def read_einstein_text(text: str) -> ParsedRecord:
    """Reads a text EinStein record back, replaying it through the kernel."""
    tags: dict[str, str] = {}
    body: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        tag = _read_tag(line)
        if tag:
            tags[tag[0]] = tag[1]
        else:
            body.append(line)
    spec = make_game(tags.get("Game", "einstein")).spec
    state = make_game(spec).new_initial_state()
    moves: list[str] = []

    def play(token: str, what: str) -> None:
        try:
            action = state.string_to_action(token)
            allowed = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() \
                else state.legal_actions()
            if action not in allowed:
                raise ValueError("not legal here")
        except ValueError as exc:
            raise ValueError(f"EinStein record: {what}: {exc}") from None
        moves.append(state.action_to_string(action))
        state.apply_action(action)

    for line in body:
        parts = line.split()
        if parts[0] == "setup":
            if len(parts) != 8 or parts[1] not in EINSTEIN_COLOURS:
                raise ValueError(f"EinStein record: malformed set-up line {line!r}")
            play(" ".join(parts[2:]), line)
            continue
        if len(parts) == 1 and parts[0].startswith("d"):
            play(parts[0], line)
            continue
        if len(parts) != 3 or parts[1] not in EINSTEIN_COLOURS:
            raise ValueError(f"EinStein record: malformed turn line {line!r}")
        play(parts[0], line)
        if state.current_player() != EINSTEIN_COLOURS.index(parts[1]):
            raise ValueError(f"EinStein record: {line!r}: it is not {parts[1]}'s turn")
        play(parts[2], line)
    parsed = ParsedRecord(spec, tags.get("Red", ""), tags.get("Blue", ""), moves=moves,
                          tags=tags, reason=tags.get("Termination", ""))
    result = tags.get("Result", "")
    if result in EINSTEIN_COLOURS:
        parsed.winner, parsed.finished = EINSTEIN_COLOURS.index(result), True
    elif result == "draw":
        parsed.finished = True
    return parsed


# -- Dice chess: PGN -----------------------------------------------------------------------

def san(state: GameState, action: int) -> str:
    """Standard algebraic notation of a dice-chess move at a player node, from our kernel:
    no check marks (dice chess has no check), ``--`` for a pass."""
    from descent.search_cy.games.dicechess import DiceChessState, move_to_uci, parse_square

    if not isinstance(state, DiceChessState):
        raise TypeError("san() needs a dice-chess state")
    uci = move_to_uci(action)
    if uci == "0000":
        return "--"
    frm, to = parse_square(uci[0:2]), parse_square(uci[2:4])
    piece = state.piece_at(frm).upper()
    capture = state.piece_at(to) != "."
    promo = f"={uci[4].upper()}" if len(uci) > 4 else ""
    if piece == "K" and abs(ord(uci[0]) - ord(uci[2])) == 2:
        return "O-O" if uci[2] > uci[0] else "O-O-O"
    if piece == "P":
        if uci[0] != uci[2]:
            return f"{uci[0]}x{uci[2:4]}{promo}"
        return f"{uci[2:4]}{promo}"
    others = []
    for other in state.legal_actions():
        o = move_to_uci(other)
        if other != action and o[2:4] == uci[2:4] and o[:2] != uci[:2] and \
                state.piece_at(parse_square(o[:2])).upper() == piece:
            others.append(o[:2])
    where = ""
    if others:
        if all(o[0] != uci[0] for o in others):
            where = uci[0]
        elif all(o[1] != uci[1] for o in others):
            where = uci[1]
        else:
            where = uci[:2]
    return f"{piece}{where}{'x' if capture else ''}{uci[2:4]}{promo}"


_PGN_TERMINATION = {"normal": "normal", "resign": "normal", "timeout": "time forfeit",
                    "illegal": "rules infraction", "protocol": "rules infraction",
                    "crash": "abandoned", "ply cap": "adjudication"}


def dicechess_pgn(record: Any, event: str = "descent arena", round_: str = "",
                  date: str | None = None) -> str:
    """PGN of a dice-chess game record with ``{[%roll N]}`` before every move."""
    r = _as_dict(record)
    game = make_game(r["game"])
    state = game.new_initial_state()
    winner = r.get("winner")
    reason = str(r.get("reason", "normal"))
    if winner is None:
        result = "1/2-1/2" if reason in ("normal", "ply cap") else "*"
    else:
        result = "1-0" if int(winner) == 0 else "0-1"
    tags = [("Event", event), ("Site", "?"), ("Date", date or _today()), ("Round", round_ or "?"),
            ("White", str(r["first"])), ("Black", str(r["second"])), ("Result", result),
            ("Variant", "Dice Chess"), ("GameSpec", game.spec),
            ("Seed", str(r.get("seed", 0))),
            ("Termination", _PGN_TERMINATION.get(reason, reason))]
    if reason not in ("normal", "ply cap") or r.get("detail"):
        tags.append(("Adjudication", str(r.get("detail") or reason)))
    out = [_tag_line(k, v) for k, v in tags]
    out.append("")
    tokens: list[str] = []
    roll = ""
    played = 0
    for move in r["moves"]:
        action = state.string_to_action(move)
        if state.is_chance_node():
            roll = move.lstrip("d")
            state.apply_action(action)
            continue
        number = played // 2 + 1
        white = state.current_player() == 0
        if white:
            tokens.append(f"{number}.")
        if roll:
            tokens.append(f"{{[%roll {roll}]}}")
        if not white:                 # a black move after a comment repeats its number
            tokens.append(f"{number}...")
        tokens.append(san(state, action))
        roll = ""
        played += 1
        state.apply_action(action)
    if roll:
        tokens.append(f"{{[%roll {roll}]}}")
    tokens.append(result)
    lines: list[str] = []
    line = ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > 79:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    lines.append(line)
    return "\n".join(out + lines) + "\n\n"


_PGN_TOKEN = re.compile(r"\{[^}]*\}|\[[^\]]*\]|;[^\n]*|\S+")


def read_dicechess_pgn(text: str) -> ParsedRecord:
    """Reads one dice-chess PGN game (rolls from ``{[%roll N]}`` comments; SAN or UCI
    moves) and replays it through the kernel."""
    tags: dict[str, str] = {}
    movetext: list[str] = []
    for raw in text.splitlines():
        tag = _read_tag(raw)
        if tag:
            tags[tag[0]] = tag[1]
        else:
            movetext.append(raw)
    spec = make_game(tags.get("GameSpec", "dicechess")).spec
    state = make_game(spec).new_initial_state()
    moves: list[str] = []
    from descent.search_cy.games.dicechess import move_to_uci

    for token in _PGN_TOKEN.findall("\n".join(movetext)):
        if token.startswith("{"):
            m = re.search(r"\[%roll\s+(\d)\]", token)
            if m:
                action = state.string_to_action(f"d{m.group(1)}")
                if not state.is_chance_node() or \
                        action not in [a for a, _ in state.chance_outcomes()]:
                    raise ValueError(f"PGN: roll {m.group(1)} is not possible here")
                moves.append(f"d{m.group(1)}")
                state.apply_action(action)
            continue
        if token.startswith(";") or re.fullmatch(r"\d+\.(\.\.)?|\$\d+", token):
            continue
        if token in ("1-0", "0-1", "1/2-1/2", "*"):
            break
        token = re.sub(r"^\d+\.+", "", token).rstrip("+#!?")
        if not token:
            continue
        if state.is_chance_node():
            raise ValueError(f"PGN: move {token!r} without a roll before it")
        legal = state.legal_actions()
        found = [a for a in legal if san(state, a) == token or move_to_uci(a) == token
                 or (token in ("--", "0000", "Z0") and move_to_uci(a) == "0000")]
        if len(found) != 1:
            raise ValueError(f"PGN: move {token!r} is not legal here")
        moves.append(state.action_to_string(found[0]))
        state.apply_action(found[0])
    parsed = ParsedRecord(spec, tags.get("White", ""), tags.get("Black", ""), moves=moves,
                          tags=tags, reason=tags.get("Termination", ""))
    result = tags.get("Result", "*")
    if result in ("1-0", "0-1"):
        parsed.winner, parsed.finished = (0 if result == "1-0" else 1), True
    elif result == "1/2-1/2":
        parsed.finished = True
    return parsed


# -- dispatch ------------------------------------------------------------------------------

WRITERS = {"hex": hex_sgf, "einstein": einstein_text, "dicechess": dicechess_pgn}
READERS = {"sgf": read_hex_sgf, "txt": read_einstein_text, "pgn": read_dicechess_pgn}


def game_name(spec: str) -> str:
    return parse_spec(spec)[0]


def record_text(record: Any, event: str = "descent arena", round_: str = "",
                date: str | None = None) -> tuple[str, str]:
    """(file extension, text) of a game record in its game's format."""
    r = _as_dict(record)
    name = game_name(r["game"])
    return EXTENSIONS[name], WRITERS[name](r, event=event, round_=round_, date=date)


def write_record(record: Any, path: str | Path, event: str = "descent arena",
                 round_: str = "", date: str | None = None) -> Path:
    """Writes the record to ``path`` (its extension is set from the game)."""
    ext, text = record_text(record, event=event, round_=round_, date=date)
    target = Path(path).with_suffix("." + ext)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def read_record(path: str | Path) -> ParsedRecord:
    """Reads a record file written by write_record (by its extension)."""
    p = Path(path)
    ext = p.suffix.lstrip(".").lower()
    if ext not in READERS:
        raise ValueError(f"{p}: unknown record type {ext!r} (sgf, pgn, txt)")
    return READERS[ext](p.read_text(encoding="utf-8"))
