# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A dice-chess NNUE valued in C inside the search (the ``native`` backend's ``nnue``).

Stockfish's design for a game of chance: the wide first layer (the feature transformer,
768 piece-square inputs a view, ``games/dicechess_nnue.h``) is kept by the position
itself, updated by the two to four pieces a move changes, so a leaf costs only the small
dense head:

    u   = clamp(acc[side to move] / Q, 0, 1) ++ clamp(acc[the other] / Q, 0, 1)
    ctx = the pending die (6, one-hot), castling rights (the mover's king and queen side,
          then the opponent's), an en passant square (1)
    v   = tanh(head(relu(fc ... relu(fc.0(u ++ ctx)))))  for the side to roll or move

(``nets/models.py``' NNUENet is the same function over the input planes, in torch.) The
first time a state is valued it is attached to the network (its accumulator summed
afresh); from then on its own make/unmake keeps it. The head runs on the mlp kernel
(mlp_kernel.h): its inputs as lists of weight rows, those at 1 (saturated units, the
context) added without a multiplication, the zeros skipped, 16 outputs a pass in vector
registers.
"""
from libc.stdint cimport int8_t, int16_t, int32_t
from libc.stdlib cimport malloc, calloc
from libc.string cimport memset
from libc.math cimport tanh

import numpy as np

from descent.search_cy.games.state cimport GameState
from descent.search_cy.games.dicechess_board cimport (
    DiceChessBoard, dc_nnue, dc_nnue_release, dc_nnue_refresh, DC_NNUE_FEATURES,
    DC_NNUE_MAX_WIDTH, DC_NNUE_Q)
from descent.search_cy.eval.nnue_head cimport NNUEHead

cdef enum:
    N_CTX = 11                        # die 6, castling 4, en passant 1
    # the encoding's planes after the twelve of pieces (nets/encoding.py's DICECHESS_PLANES)
    P_TO_MOVE = 12
    P_CASTLING = 13
    P_EP = 17
    P_DIE = 18

FEATURES = DC_NNUE_FEATURES
PLANES = {"to_move": P_TO_MOVE, "castling": P_CASTLING, "ep": P_EP, "die": P_DIE}
MAX_WIDTH = DC_NNUE_MAX_WIDTH
Q = DC_NNUE_Q
CONTEXT = N_CTX


cdef inline int _movers_first(int castle, int side) noexcept nogil:
    """The castling bits (K Q k q) with the side to move's two first, as the head reads
    them."""
    return (castle >> 2) | ((castle & 3) << 2) if side == 1 else castle


cdef inline int _context(int* out, int die, int castle, bint ep) noexcept nogil:
    """The head's context inputs at 1 (indices past the two views): the die, the castling
    bits (the mover's first), en passant; their count."""
    cdef int n = 0, i
    if die:
        out[n] = die - 1
        n += 1
    for i in range(4):
        if castle >> i & 1:
            out[n] = 6 + i
            n += 1
    if ep:
        out[n] = 10
        n += 1
    return n


cdef class NNUEEvaluator(NNUEHead):
    """Values dice-chess states with an NNUE (player 0's view, within [lo, hi]).

    ``ft_weight`` (width, 768) and ``ft_bias`` (width,) are the feature transformer, in
    the model file's floats (whole multiples of 1 / Q within int16's range);
    ``layers`` [(weight, bias), ...] the head in forward order, the first taking 2 *
    width + 11 inputs, the last giving one output; ReLU between them. The output speaks
    for the side to roll or move; ``tanh_output``, ``scale``, ``lo`` and ``hi`` as for
    MLPEvaluator.
    """

    cdef dc_nnue* net
    cdef int32_t acc[2 * DC_NNUE_MAX_WIDTH]   # forward()'s accumulator
    cdef object ft_weight, ft_bias             # for spawn

    def __cinit__(self, *args, **kwargs):
        self.net = NULL

    def __init__(self, ft_weight, ft_bias, layers, *, bint tanh_output, double scale=1.0,
                 double lo=-1.0, double hi=1.0):
        cdef int i, j, width
        ftw, ftb, qt_arr, qb_arr = self._transformer(
            ft_weight, ft_bias, DC_NNUE_FEATURES, f"{DC_NNUE_FEATURES} features",
            DC_NNUE_MAX_WIDTH, DC_NNUE_Q)
        width = ftw.shape[0]
        self._setup_head(width, N_CTX, layers, tanh_output=tanh_output, scale=scale, lo=lo,
                         hi=hi)
        self.ft_weight, self.ft_bias = ftw, ftb
        self.net = <dc_nnue*>calloc(1, sizeof(dc_nnue))
        if self.net == NULL:
            raise MemoryError()
        self.net.refs = 1
        self.net.width = width
        self.net.ft = <int16_t*>malloc(DC_NNUE_FEATURES * width * sizeof(int16_t))
        self.net.bias = <int16_t*>malloc(width * sizeof(int16_t))
        if self.net.ft == NULL or self.net.bias == NULL:
            raise MemoryError()
        cdef int16_t[:, ::1] qt = qt_arr
        cdef int16_t[::1] qbv = qb_arr
        for i in range(DC_NNUE_FEATURES):
            for j in range(width):
                self.net.ft[i * width + j] = qt[i, j]
        for j in range(width):
            self.net.bias[j] = qbv[j]

    def __dealloc__(self):
        dc_nnue_release(self.net)

    def spawn(self):
        """The same network in a second instance (its own scratch), for another search
        thread."""
        return NNUEEvaluator(self.ft_weight, self.ft_bias, self.layers,
                             tanh_output=self.tanh_output, scale=self.scale, lo=self.lo,
                             hi=self.hi)

    cdef double c_heuristic(self, GameState s) noexcept nogil:
        return self._value(<DiceChessBoard>s)

    cdef double _value(self, DiceChessBoard b) noexcept nogil:
        cdef int side = b.side
        cdef int context[N_CTX]
        if b.nnue != self.net:
            b.c_nnue_attach(self.net)
        return self._finish(self._head(
            b.nnue_acc + side * DC_NNUE_MAX_WIDTH,
            b.nnue_acc + (1 - side) * DC_NNUE_MAX_WIDTH, DC_NNUE_Q, context,
            _context(context, b.die, _movers_first(b.castling, side), b.ep >= 0)), side)

    def check_state(self, GameState s) -> None:
        """ValueError unless ``s`` is a dice-chess state (what c_heuristic reads)."""
        if not isinstance(s, DiceChessBoard):
            raise ValueError(f"an NNUE values dice chess states, not {s.game.name}")

    def accumulator(self, GameState s, bint fresh=False):
        """The (2, width) int32 accumulator ``s`` holds for this network (attaching it
        first if it holds none), or with ``fresh`` one summed afresh from its board: the
        two are equal after any moves (the tests' check)."""
        self.check_state(s)
        cdef DiceChessBoard b = <DiceChessBoard>s
        cdef int32_t tmp[2 * DC_NNUE_MAX_WIDTH]
        cdef const int32_t* src = b.nnue_acc
        if fresh:
            dc_nnue_refresh(self.net, tmp, b.board)
            src = tmp
        elif b.nnue != self.net:
            b.c_nnue_attach(self.net)
        return self._sums(src, DC_NNUE_MAX_WIDTH)

    def value(self, GameState s) -> float:
        """c_heuristic on ``s`` (checked): player 0's view."""
        self.check_state(s)
        return self.c_heuristic(s)

    def forward(self, batch) -> np.ndarray:
        """Raw outputs (float32, tanh applied if the model has it; before scale and view)
        of a float32 (n, 24, 8, 8) batch of encoded positions (the ``native`` backend's
        call): the accumulators summed from the planes' pieces."""
        arr = np.ascontiguousarray(batch, dtype=np.float32)
        if arr.ndim != 4 or tuple(arr.shape[1:]) != (24, 8, 8):
            raise ValueError(f"batch shape {tuple(arr.shape)} does not encode dice chess's "
                             f"24 planes of 8 x 8")
        cdef Py_ssize_t i, n = arr.shape[0]
        cdef int sq, p, die, castle, side
        cdef bint ep
        cdef double raw
        cdef float[:, :, ::1] x = arr.reshape(n, 24, 64)
        cdef int8_t board[64]
        cdef int context[N_CTX]
        out = np.empty(n, dtype=np.float32)
        cdef float[::1] o = out
        with nogil:
            for i in range(n):
                memset(board, 0, 64)
                for p in range(12):
                    for sq in range(64):
                        if x[i, p, sq] > 0.5:
                            board[sq] = (p // 6) * 8 + p % 6 + 1
                dc_nnue_refresh(self.net, self.acc, board)
                side = 0 if x[i, P_TO_MOVE, 0] > 0.5 else 1
                castle = 0
                for p in range(4):
                    if x[i, P_CASTLING + p, 0] > 0.5:
                        castle |= 1 << p
                ep = False
                for sq in range(64):
                    ep = ep or x[i, P_EP, sq] > 0.5
                die = 0
                for p in range(6):
                    if x[i, P_DIE + p, 0] > 0.5:
                        die = p + 1
                raw = self._head(self.acc + side * DC_NNUE_MAX_WIDTH,
                                 self.acc + (1 - side) * DC_NNUE_MAX_WIDTH, DC_NNUE_Q,
                                 context, _context(context, die,
                                                   _movers_first(castle, side), ep))
                o[i] = <float>(tanh(raw) if self.tanh_output else raw)
        return out
