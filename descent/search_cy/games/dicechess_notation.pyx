# cython: language_level=3
"""Dice chess notation (Python level, never on the search path): square names, UCI move
text, die rolls, FEN and DFEN, read with checks (NotationError names the first problem)
and written. Formats: dicechess.pyx's module docstring."""
from descent.search_cy.games.dicechess_types cimport PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING

from descent.search_cy.games.state import NotationError

PIECE_LETTERS = ".PNBRQK"


def square_name(int sq) -> str:
    if not 0 <= sq < 64:
        raise NotationError(f"square id {sq} is off the board (0..63)")
    return "abcdefgh"[sq % 8] + str(sq // 8 + 1)


def parse_square(str text) -> int:
    t = text.strip().lower()
    if len(t) != 2 or t[0] not in "abcdefgh" or t[1] not in "12345678":
        raise NotationError(f"malformed square {text!r}: expected a file a..h and a rank 1..8")
    return (ord(t[1]) - ord("1")) * 8 + ord(t[0]) - ord("a")


def move_to_uci(int action) -> str:
    """Move id -> UCI text; 0 is the pass ``0000``."""
    if action == 0:
        return "0000"
    frm = action & 63
    to = (action >> 6) & 63
    promo = action >> 12
    if action < 0 or promo > 4 or frm == to:
        raise NotationError(f"action {action} is not a dice chess move id")
    return square_name(frm) + square_name(to) + ("", "n", "b", "r", "q")[promo]


def parse_uci(str text) -> int:
    """UCI text (``e2e4``, ``e7e8q``, ``0000``) -> move id; legality is not checked."""
    t = text.strip()
    if t == "0000":
        return 0
    if len(t) not in (4, 5):
        raise NotationError(f"malformed move {text!r}: expected UCI like e2e4, e7e8q or 0000")
    frm = parse_square(t[0:2])
    to = parse_square(t[2:4])
    if frm == to:
        raise NotationError(f"malformed move {text!r}: from and to squares are equal "
                            "(the pass is 0000)")
    promo = 0
    if len(t) == 5:
        p = t[4].lower()
        if p == "k":
            raise NotationError(f"move {text!r}: a pawn never promotes to a king")
        if p not in "nbrq":
            raise NotationError(f"move {text!r}: promotion piece {t[4]!r} is not n, b, r or q")
        promo = "nbrq".index(p) + 1
    return frm | (to << 6) | (promo << 12)


def parse_die(str text) -> int:
    """Die outcome text -> 1..6: ``d3``, ``3`` or the piece letter (p n b r q k)."""
    t = text.strip().lower()
    if len(t) == 2 and t[0] == "d":
        t = t[1]
    if len(t) == 1 and t in "123456":
        return int(t)
    if len(t) == 1 and t in "pnbrqk":
        return "pnbrqk".index(t) + 1
    raise NotationError(f"malformed die roll {text!r}: expected d1..d6, 1..6 or a piece "
                        "letter p n b r q k")


cdef list _read_board(str placement):
    """FEN placement field -> 64 piece codes (colour * 8 + type, 0 empty)."""
    ranks = placement.split("/")
    if len(ranks) != 8:
        raise NotationError(f"FEN board {placement!r} has {len(ranks)} ranks, expected 8")
    board = [0] * 64
    for i, row in enumerate(ranks):
        rank = 7 - i
        f = 0
        for k, ch in enumerate(row):
            if ch in "12345678":
                if k and row[k - 1] in "12345678":
                    raise NotationError(f"FEN rank {rank + 1} {row!r}: two digits in a row")
                f += int(ch)
            elif ch.upper() in "PNBRQK":
                if f < 8:
                    board[rank * 8 + f] = (8 if ch.islower() else 0) + "PNBRQK".index(
                        ch.upper()) + 1
                f += 1
            else:
                raise NotationError(f"FEN rank {rank + 1} {row!r}: bad piece letter {ch!r} "
                                    "(expected PNBRQK, pnbrqk or a digit 1..8)")
            if f > 8:
                break
        if f != 8:
            raise NotationError(f"FEN rank {rank + 1} {row!r} covers {f} squares, expected 8")
    return board


cdef _check_men(list board):
    """Men a game can reach: one king a side at most (not both missing), 16 men and 8
    pawns a side at most, promoted pieces only for missing pawns, no pawn on rank 1 or 8."""
    for colour, name in ((0, "White"), (1, "Black")):
        count = [sum(1 for c in board if c == colour * 8 + t) for t in range(7)]
        if count[KING] > 1:
            raise NotationError(f"FEN: {name} has {count[KING]} kings")
        total = sum(count[1:])
        if total > 16:
            raise NotationError(f"FEN: {name} has {total} pieces (at most 16)")
        if count[PAWN] > 8:
            raise NotationError(f"FEN: {name} has {count[PAWN]} pawns (at most 8)")
        promoted = (max(0, count[KNIGHT] - 2) + max(0, count[BISHOP] - 2)
                    + max(0, count[ROOK] - 2) + max(0, count[QUEEN] - 1))
        if promoted > 8 - count[PAWN]:
            raise NotationError(f"FEN: {name} has more promoted pieces ({promoted}) than "
                                f"missing pawns ({8 - count[PAWN]})")
    if KING not in board and 8 + KING not in board:
        raise NotationError("FEN: both kings are missing")
    for sq in list(range(8)) + list(range(56, 64)):
        if board[sq] & 7 == PAWN:
            raise NotationError(f"FEN: pawn on {square_name(sq)} (pawns never stand on the "
                                "first or last rank)")


cdef int _read_castling(str castle_f, list board) except -1:
    """FEN castling field -> rights bits (1 K, 2 Q, 4 k, 8 q), each with its king and
    rook at home."""
    castling = 0
    if castle_f == "-":
        return 0
    for ch in castle_f:
        if ch not in "KQkq":
            raise NotationError(f"FEN castling field {castle_f!r}: bad letter {ch!r} "
                                "(expected KQkq or -)")
        bit = 1 << "KQkq".index(ch)
        if castling & bit:
            raise NotationError(f"FEN castling field {castle_f!r}: {ch!r} given twice")
        castling |= bit
    if castle_f != "".join(c for c in "KQkq" if c in castle_f):
        raise NotationError(f"FEN castling field {castle_f!r}: letters out of order "
                            "(expected a subset of KQkq in that order)")
    for i, (ksq, rsq) in enumerate(((4, 7), (4, 0), (60, 63), (60, 56))):
        if castling >> i & 1:
            colour = i // 2
            if board[ksq] != colour * 8 + KING or board[rsq] != colour * 8 + ROOK:
                raise NotationError(
                    f"FEN castling right {'KQkq'[i]!r} without the "
                    f"{('White', 'Black')[colour]} king on {square_name(ksq)} and rook "
                    f"on {square_name(rsq)}")
    return castling


cdef int _read_ep(str ep_f, int side, list board) except -2:
    """FEN en passant field -> the normalised target square, -1 none: kept only when a
    pawn of the side to move can take en passant."""
    if ep_f == "-":
        return -1
    try:
        ep = parse_square(ep_f)
    except NotationError:
        raise NotationError(f"FEN en passant field {ep_f!r}: expected a square or -") \
            from None
    want = 5 if side == 0 else 2
    if ep // 8 != want:
        raise NotationError(f"FEN en passant square {ep_f}: must be on rank {want + 1} "
                            f"with {('White', 'Black')[side]} to move")
    pushed = ep - 8 if side == 0 else ep + 8
    origin = ep + 8 if side == 0 else ep - 8
    if board[pushed] != (side ^ 1) * 8 + PAWN or board[ep] or board[origin]:
        raise NotationError(f"FEN en passant square {ep_f}: no pawn just made a double "
                            f"step there (needs a pawn on {square_name(pushed)} and "
                            f"{ep_f}, {square_name(origin)} empty)")
    beside = [pushed + df for df in (-1, 1) if 0 <= pushed % 8 + df < 8]
    if not any(board[sq] == side * 8 + PAWN for sq in beside):
        return -1
    return ep


cdef tuple _read_counters(str half_f, str full_f):
    """FEN halfmove clock and fullmove number -> (halfmove, fullmove)."""
    try:
        halfmove = int(half_f)
        fullmove = int(full_f)
    except ValueError:
        raise NotationError(f"FEN move counters {half_f!r} {full_f!r}: expected integers") \
            from None
    if not (half_f.isascii() and half_f.isdigit()) or halfmove < 0:
        raise NotationError(f"FEN halfmove clock {half_f!r}: expected an integer >= 0")
    if not (full_f.isascii() and full_f.isdigit()) or fullmove < 1:
        raise NotationError(f"FEN fullmove number {full_f!r}: expected an integer >= 1")
    if halfmove > 10000 or fullmove > 100000:
        raise NotationError(f"FEN move counters {half_f} {full_f} are out of range")
    return halfmove, fullmove


cdef int _read_die(str d, int side, list board) except -1:
    """DFEN seventh field (the rolled piece letter, upper case for White) -> die 1..6."""
    if len(d) != 1 or d.upper() not in "PNBRQK":
        raise NotationError(f"DFEN die field {d!r}: expected a piece letter "
                            "(PNBRQK for White's roll, pnbrqk for Black's) or -")
    if d.isupper() != (side == 0):
        raise NotationError(f"DFEN die field {d!r} is a {('White', 'Black')[side]}"
                            f"-to-move roll only in {('upper', 'lower')[side]} case")
    if KING not in board or 8 + KING not in board:
        raise NotationError("DFEN: a die is given but a king is missing (game over)")
    return "PNBRQK".index(d.upper()) + 1


def parse_position(str text) -> tuple:
    """FEN or DFEN -> (board codes, side, castling, ep, halfmove, fullmove, die), checked
    as text and as a position; NotationError names the first problem. (Whether a DFEN
    die can be rolled at all depends on the rules options: dicechess.pyx checks it.)"""
    fields = text.split()
    if len(fields) not in (6, 7):
        raise NotationError(f"FEN {text!r} has {len(fields)} fields: expected 6 (FEN) or 7 "
                            "(DFEN: FEN + rolled piece letter)")
    placement, side_f, castle_f, ep_f, half_f, full_f = fields[:6]
    board = _read_board(placement)
    _check_men(board)
    if side_f not in ("w", "b"):
        raise NotationError(f"FEN side to move {side_f!r}: expected w or b")
    side = 0 if side_f == "w" else 1
    castling = _read_castling(castle_f, board)
    ep = _read_ep(ep_f, side, board)
    halfmove, fullmove = _read_counters(half_f, full_f)
    die = 0
    if len(fields) == 7 and fields[6] != "-":
        die = _read_die(fields[6], side, board)
    return (tuple(board), side, castling, ep, halfmove, fullmove, die)


def format_fen(board, int side, int castling, int ep, int halfmove, int fullmove) -> str:
    """Six-field FEN from board codes (64, colour * 8 + type, 0 empty) and the fields."""
    rows = []
    for rank in range(7, -1, -1):
        row = ""
        empty = 0
        for f in range(8):
            pc = board[rank * 8 + f]
            if not pc:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            letter = PIECE_LETTERS[pc & 7]
            row += letter if pc < 8 else letter.lower()
        if empty:
            row += str(empty)
        rows.append(row)
    rights = "".join(c for i, c in enumerate("KQkq") if castling >> i & 1) or "-"
    ep_text = square_name(ep) if ep >= 0 else "-"
    return f"{'/'.join(rows)} {'wb'[side]} {rights} {ep_text} {halfmove} {fullmove}"
