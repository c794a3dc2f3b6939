# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A Hex NNUE valued in C inside the search (the ``native`` backend's ``nnue`` for Hex).

Stockfish's design on Hex's board (``hex_nnue.h`` lists the features): each player's view
sets one feature a cell (its stone, the opponent's, or an empty cell's neighbourhood of
six at its distances from the edges), the feature transformer sums their rows in int32
(weights whole multiples of 1 / Q), and a small dense head reads both views:

    u = clamp(acc[side to move] / Q, 0, 1) ++ clamp(acc[the other] / Q, 0, 1)
    v = tanh(head(relu(fc ... relu(fc.0(u)))))   for the side to move

(``nets/models.py``' HexNNUENet is the same function over the input planes, in torch.)
The evaluator keeps the sums of the last board it valued and moves them to the next by
the cells that differ (each changed cell redoes the features of itself and its six
neighbours), so a node's children, valued one after another, cost a few rows each
instead of 2 n^2; the head runs on the mlp kernel (nnue_head.pyx).
"""
from libc.stdint cimport int8_t, int16_t, int32_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy
from libc.math cimport tanh

import numpy as np

from descent.search_cy.games.state cimport GameState
from descent.search_cy.games.hex cimport HexState
from descent.search_cy.eval.evaluator cimport HeuristicEvaluator, KNOW_NONE
from descent.search_cy.eval.nnue_head cimport NNUEHead

cdef extern from "hex_nnue.h":
    enum: HX_NNUE_PATTERNS
    enum: HX_NNUE_LINES
    enum: HX_NNUE_Q
    enum: HX_NNUE_MAX_WIDTH
    int hx_nnue_features(int n) noexcept nogil
    void hx_nnue_indices(const int8_t* cells, int n, int view, int32_t* idx) noexcept nogil
    void hx_nnue_update(const int16_t* ft, int width, const int8_t* was, const int8_t* now,
                        int n, const int32_t* changed, int count, int32_t* acc, int stride,
                        int32_t* stamp) noexcept nogil
    int hx_nnue_delta_limit(int n) noexcept nogil
    void hx_nnue_sum(const int16_t* ft, const int16_t* bias, int width, const int32_t* idx,
                     int count, int32_t* acc) noexcept nogil

Q = HX_NNUE_Q
MAX_WIDTH = HX_NNUE_MAX_WIDTH
PATTERNS = HX_NNUE_PATTERNS
LINES = HX_NNUE_LINES


def features(int size) -> int:
    """Features of one view at board size ``size``."""
    return hx_nnue_features(size)


cdef class HexNNUEEvaluator(NNUEHead):
    """Values Hex states of board size ``size`` with an NNUE (player 0's view, within
    [lo, hi]).

    ``ft_weight`` (width, features(size)) and ``ft_bias`` (width,) are the feature
    transformer, in the model file's floats (whole multiples of 1 / Q within int16's
    range); ``layers`` [(weight, bias), ...] the head in forward order, the first taking 2 *
    width inputs, the last giving one output; ReLU between them. The output speaks for the
    side to move; ``tanh_output``, ``scale``, ``lo`` and ``hi`` as for MLPEvaluator.
    """

    cdef int16_t* ft                   # features x width, feature-major
    cdef int16_t* bias
    cdef readonly int size
    cdef int32_t* idx                  # scratch: one view's features, or changed cells
    cdef int32_t* stamp                # scratch of hx_nnue_update, kept at zero
    cdef int32_t acc[2 * HX_NNUE_MAX_WIDTH]   # the sums of the board ``seen``
    cdef int8_t* seen
    cdef bint have                     # whether acc holds seen's sums
    cdef int8_t* cells                 # forward()'s board
    cdef object ft_weight, ft_bias     # for spawn
    cdef public HeuristicEvaluator know   # whose proofs and mustplays it speaks, or None

    def __cinit__(self, *args, **kwargs):
        self.ft = self.bias = NULL
        self.idx = self.stamp = NULL
        self.cells = self.seen = NULL
        self.have = False
        self.know = None

    def __init__(self, ft_weight, ft_bias, layers, *, int size, bint tanh_output,
                 double scale=1.0, double lo=-1.0, double hi=1.0):
        cdef int i, j, width, nf
        if not 1 <= size <= 26:
            raise ValueError(f"board size {size}: Hex's sizes run from 1 to 26")
        nf = hx_nnue_features(size)
        ftw, ftb, qt_arr, qb_arr = self._transformer(
            ft_weight, ft_bias, nf, f"the {nf} features of {size}x{size}", HX_NNUE_MAX_WIDTH,
            HX_NNUE_Q)
        width = ftw.shape[0]
        self._setup_head(width, 0, layers, tanh_output=tanh_output, scale=scale, lo=lo,
                         hi=hi)
        self.size = size
        self.ft_weight, self.ft_bias = ftw, ftb
        self.ft = <int16_t*>malloc(<size_t>nf * width * sizeof(int16_t))
        self.bias = <int16_t*>malloc(width * sizeof(int16_t))
        self.idx = <int32_t*>malloc(size * size * sizeof(int32_t))
        self.cells = <int8_t*>malloc(size * size * sizeof(int8_t))
        self.seen = <int8_t*>malloc(size * size * sizeof(int8_t))
        self.stamp = <int32_t*>calloc(size * size, sizeof(int32_t))
        if self.ft == NULL or self.bias == NULL or self.idx == NULL or self.cells == NULL \
                or self.seen == NULL or self.stamp == NULL:
            raise MemoryError()
        cdef int16_t[:, ::1] qt = qt_arr
        cdef int16_t[::1] qbv = qb_arr
        for i in range(nf):
            for j in range(width):
                self.ft[<size_t>i * width + j] = qt[i, j]
        for j in range(width):
            self.bias[j] = qbv[j]

    def __dealloc__(self):
        free(self.ft)
        free(self.bias)
        free(self.idx)
        free(self.cells)
        free(self.seen)
        free(self.stamp)

    def spawn(self):
        """The same network in a second instance (its own scratch), for another search
        thread."""
        out = HexNNUEEvaluator(self.ft_weight, self.ft_bias, self.layers, size=self.size,
                               tanh_output=self.tanh_output, scale=self.scale,
                               lo=self.lo, hi=self.hi)
        out.know = self.know.spawn() if self.know is not None else None
        return out

    cdef void _refresh(self, const int8_t* cells) noexcept nogil:
        """Both views' sums of ``cells`` into ``acc`` (Black's view first): moved from
        the last board's by the cells that differ when they are few (a search values
        siblings and nearby positions one after another), else summed afresh. The sums
        are integers, so both ways give the same bits."""
        cdef int i, count = 0, n2 = self.size * self.size
        cdef int limit = hx_nnue_delta_limit(self.size)
        if self.have:
            for i in range(n2):
                if cells[i] != self.seen[i]:
                    if count == limit:
                        count = limit + 1
                        break
                    self.idx[count] = i
                    count += 1
            if count <= limit:
                if count:
                    hx_nnue_update(self.ft, self.width, self.seen, cells, self.size,
                                   self.idx, count, self.acc, HX_NNUE_MAX_WIDTH,
                                   self.stamp)
                    memcpy(self.seen, cells, n2)
                return
        self._fresh(cells, self.acc)
        memcpy(self.seen, cells, n2)
        self.have = True

    cdef void _fresh(self, const int8_t* cells, int32_t* acc) noexcept nogil:
        """Both views' sums of ``cells`` summed afresh into ``acc``."""
        cdef int view
        for view in range(2):
            hx_nnue_indices(cells, self.size, view, self.idx)
            hx_nnue_sum(self.ft, self.bias, self.width, self.idx, self.size * self.size,
                        acc + view * HX_NNUE_MAX_WIDTH)

    cdef double _raw(self, const int8_t* cells, int side) noexcept nogil:
        self._refresh(cells)
        return self._head(self.acc + side * HX_NNUE_MAX_WIDTH,
                          self.acc + (1 - side) * HX_NNUE_MAX_WIDTH, HX_NNUE_Q, NULL, 0)

    cdef double c_heuristic(self, GameState s) noexcept nogil:
        return self._value(<HexState>s)

    cdef double _value(self, HexState h) noexcept nogil:
        return self._finish(self._raw(h.cells, h.side), h.side)

    cdef int c_knowledge(self, GameState s, int8_t* keep) noexcept nogil:
        # the network values; the proofs and mustplays are the knowledge evaluator's (the
        # VC evaluator's, which a best-first search prunes lost children by)
        if self.know is None:
            return KNOW_NONE
        return self.know.c_knowledge(s, keep)

    def check_state(self, GameState s) -> None:
        """ValueError unless ``s`` is a Hex state of this network's size (what
        c_heuristic reads)."""
        if not isinstance(s, HexState):
            raise ValueError(f"a Hex NNUE values Hex states, not {s.game.name}")
        if (<HexState>s).n != self.size:
            raise ValueError(f"a {self.size}x{self.size} Hex NNUE cannot value a "
                             f"{(<HexState>s).n}x{(<HexState>s).n} board")

    def accumulator(self, GameState s, bint fresh=False):
        """The (2, width) int32 sums of ``s``'s two views (Black's first), as a value
        computes them (moved from the last board's where it can), or with ``fresh``
        summed afresh: the two are equal after any sequence (the tests' check)."""
        self.check_state(s)
        cdef int32_t tmp[2 * HX_NNUE_MAX_WIDTH]
        cdef const int32_t* src = self.acc
        if fresh:
            self._fresh((<HexState>s).cells, tmp)
            src = tmp
        else:
            self._refresh((<HexState>s).cells)
        return self._sums(src, HX_NNUE_MAX_WIDTH)

    def indices(self, GameState s, int view):
        """The features ``view`` (0 Black, 1 White) of ``s`` sets, one a cell (tests)."""
        self.check_state(s)
        out = np.empty(self.size * self.size, dtype=np.int32)
        cdef int32_t[::1] o = out
        hx_nnue_indices((<HexState>s).cells, self.size, view, &o[0])
        return out

    def value(self, GameState s) -> float:
        """c_heuristic on ``s`` (checked): player 0's view."""
        self.check_state(s)
        return self.c_heuristic(s)

    def forward(self, batch) -> np.ndarray:
        """Raw outputs (float32, tanh applied if the model has it; before scale and view)
        of a float32 (m, 3, size + 2, size + 2) batch of encoded positions (the ``native``
        backend's call), for the side to move of each."""
        cdef int n = self.size, w = self.size + 2
        arr = np.ascontiguousarray(batch, dtype=np.float32)
        if arr.ndim != 4 or tuple(arr.shape[1:]) != (3, w, w):
            raise ValueError(f"batch shape {tuple(arr.shape)} does not encode {n}x{n} Hex's "
                             f"3 planes of {w} x {w}")
        cdef Py_ssize_t i, m = arr.shape[0]
        cdef int r, c, side
        cdef float[:, :, :, ::1] x = arr
        out = np.empty(m, dtype=np.float32)
        cdef float[::1] o = out
        cdef double raw
        with nogil:
            for i in range(m):
                for r in range(n):
                    for c in range(n):
                        self.cells[r * n + c] = (1 if x[i, 0, r + 1, c + 1] > 0.5 else
                                                 2 if x[i, 1, r + 1, c + 1] > 0.5 else 0)
                side = 0 if x[i, 2, 0, 0] > 0.5 else 1
                raw = self._raw(self.cells, side)
                o[i] = <float>(tanh(raw) if self.tanh_output else raw)
        return out
