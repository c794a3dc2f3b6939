# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A fully connected value network evaluated in C inside the search (the ``native`` backend).

The ``mlp`` architecture (nets/arch.py) reads the kernel's 0/1 input planes flattened. A
position sets a few dozen of those inputs (a piece on a square), plus a few planes that are
all ones (side to move, the pending die). So the first layer is a sum of weight rows: one
row per set input, and one precomputed row sum per all-ones plane. That is about 60
(EinStein) to 150 (dice chess) rows of the first width, not a dense product over 475 or
1536 inputs. The deeper layers skip the inputs that ReLU zeroed. Every layer is stored
transposed (input-major), so each step adds one contiguous row to the accumulator, a loop
the compiler vectorises (mlp_kernel.h).

Values come out exactly as nets.evaluator.NetworkFunction and BatchEvaluator would give
them: raw output (tanh if the model has it) times scale, negated when the model speaks for
the side to move and player 1 is to move, clipped to [lo, hi], negated back for a
colour-swapping input symmetry. Each value is computed at ``c_add`` without the GIL and
with no Python call.

One evaluator keeps one scratch buffer: it serves one search at a time (as every evaluator
does).
"""
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset
from libc.math cimport tanh

import numpy as np

from search_cy.games.state cimport GameState
from search_cy.search.evaluator cimport HeuristicEvaluator

cdef extern from "mlp_kernel.h":
    float descent_mlp_forward(const float* x, int planes, int cells, int n_layers,
                              const int* widths, float** weights, float** biases,
                              const float* plane_sums, float* a, float* b) noexcept nogil

cdef enum:
    MAX_LAYERS = 8                       # hidden layers + head


cdef class MLPEvaluator(HeuristicEvaluator):
    """Values states with an mlp network in C (player 0's view, within [lo, hi]).

    ``layers``: [(weight, bias), ...] in forward order, weight shaped (out, in) as in the
    model file, the last layer having one output; ReLU after every layer but the last.
    ``to_move_plane`` >= 0 when the outputs are in the side to move's view (the plane that
    is all ones when player 0 is to move in the encoded frame).
    """

    cdef int n_in, n_layers, planes, cells, max_width, to_move_plane
    cdef int widths[MAX_LAYERS + 1]      # widths[0] = inputs, widths[k+1] = outputs of k
    cdef float* weights[MAX_LAYERS]      # layer k transposed: (widths[k], widths[k+1])
    cdef float* biases[MAX_LAYERS]
    cdef float* plane_sums               # (planes, widths[1]): row sums per input plane
    cdef float* x                        # encoded position
    cdef float* a
    cdef float* b
    cdef readonly int symmetry
    cdef readonly bint tanh_output
    cdef readonly double scale

    def __cinit__(self, *args, **kwargs):
        cdef int k
        for k in range(MAX_LAYERS):
            self.weights[k] = NULL
            self.biases[k] = NULL
        self.plane_sums = NULL
        self.x = NULL
        self.a = NULL
        self.b = NULL
        self.n_layers = 0

    def __init__(self, GameState prototype, layers, *, bint tanh_output, double scale=1.0,
                 double lo=-1.0, double hi=1.0, int to_move_plane=-1, int symmetry=0):
        if not lo < hi:
            raise ValueError("bounds need lo < hi")
        if not 0 <= symmetry < prototype.num_symmetries:
            raise ValueError(f"symmetry {symmetry} out of range 0..{prototype.num_symmetries - 1}")
        if not -1 <= to_move_plane < prototype.num_planes:
            raise ValueError(f"to_move_plane {to_move_plane} is not a plane of the encoding")
        self.planes = prototype.num_planes
        self.cells = prototype.height * prototype.width
        self.n_in = self.planes * self.cells
        self.lo = lo
        self.hi = hi
        self.scale = scale
        self.tanh_output = tanh_output
        self.to_move_plane = to_move_plane
        self.symmetry = symmetry
        self.load(layers)

    def __dealloc__(self):
        self._release()

    cdef void _release(self) noexcept:
        cdef int k
        for k in range(MAX_LAYERS):
            free(self.weights[k])
            free(self.biases[k])
            self.weights[k] = NULL
            self.biases[k] = NULL
        free(self.plane_sums)
        free(self.x)
        free(self.a)
        free(self.b)
        self.plane_sums = self.x = self.a = self.b = NULL
        self.n_layers = 0

    def load(self, layers) -> None:
        """Replaces the weights (same input encoding). Checks every shape and value first,
        so a refused set leaves the evaluator as it was."""
        cdef int k, i, j, c, n_in, n_out
        cdef float* w
        cdef float[:, ::1] wv
        cdef float[::1] bv
        checked = []
        width = self.n_in
        layers = list(layers)
        if not 2 <= len(layers) <= MAX_LAYERS:
            raise ValueError(f"an mlp needs 2 to {MAX_LAYERS} layers (hidden + head), "
                             f"got {len(layers)}")
        for k, (weight, bias) in enumerate(layers):
            weight = np.ascontiguousarray(weight, dtype=np.float32)
            bias = np.ascontiguousarray(bias, dtype=np.float32).reshape(-1)
            if weight.ndim != 2 or weight.shape[1] != width or bias.shape[0] != weight.shape[0]:
                raise ValueError(f"layer {k}: weight {tuple(weight.shape)} and bias "
                                 f"{tuple(bias.shape)} do not take {width} inputs")
            if not (np.isfinite(weight).all() and np.isfinite(bias).all()):
                raise ValueError(f"layer {k}: weights are not all finite")
            checked.append((np.ascontiguousarray(weight.T), bias))
            width = weight.shape[0]
        if width != 1:
            raise ValueError(f"the last layer has {width} outputs, a value network has 1")
        self._release()
        self.n_layers = len(checked)
        self.widths[0] = self.n_in
        self.max_width = self.n_in
        for k, (wt, bias) in enumerate(checked):
            n_in, n_out = wt.shape[0], wt.shape[1]
            self.widths[k + 1] = n_out
            self.max_width = max(self.max_width, n_out)
            self.weights[k] = <float*>malloc(n_in * n_out * sizeof(float))
            self.biases[k] = <float*>malloc(n_out * sizeof(float))
            if self.weights[k] == NULL or self.biases[k] == NULL:
                self._release()
                raise MemoryError()
            wv = wt
            bv = bias
            memcpy(self.weights[k], &wv[0, 0], n_in * n_out * sizeof(float))
            memcpy(self.biases[k], &bv[0], n_out * sizeof(float))
        n_out = self.widths[1]
        self.plane_sums = <float*>malloc(self.planes * n_out * sizeof(float))
        self.x = <float*>malloc(self.n_in * sizeof(float))
        self.a = <float*>malloc(self.max_width * sizeof(float))
        self.b = <float*>malloc(self.max_width * sizeof(float))
        if self.plane_sums == NULL or self.x == NULL or self.a == NULL or self.b == NULL:
            self._release()
            raise MemoryError()
        memset(self.plane_sums, 0, self.planes * n_out * sizeof(float))
        w = self.weights[0]
        for i in range(self.planes):
            for c in range(self.cells):
                for j in range(n_out):
                    self.plane_sums[i * n_out + j] += w[(i * self.cells + c) * n_out + j]

    @property
    def widths_(self) -> tuple:
        """(inputs, hidden widths..., 1)."""
        return tuple(self.widths[k] for k in range(self.n_layers + 1))

    cdef double _raw(self, const float* x) noexcept nogil:
        """The network's output for one encoded position (tanh applied if the model has it)."""
        cdef double out = descent_mlp_forward(x, self.planes, self.cells, self.n_layers,
                                              self.widths, self.weights, self.biases,
                                              self.plane_sums, self.a, self.b)
        if self.tanh_output:
            return tanh(out)
        return out

    cdef double c_heuristic(self, GameState s) noexcept nogil:
        cdef double v
        s.c_encode(self.x, self.symmetry)
        v = self._raw(self.x) * self.scale
        if self.to_move_plane >= 0 and self.x[self.to_move_plane * self.cells] < 0.5:
            v = -v
        if v < self.lo:
            v = self.lo
        elif v > self.hi:
            v = self.hi
        if s.c_sym_swaps_colours(self.symmetry):
            v = -v
        return v

    def forward(self, batch) -> np.ndarray:
        """Raw outputs (float32, tanh applied if the model has it; before scale and view)
        of a float32 (n, planes, height, width) batch: the ``native`` backend's call."""
        cdef float[:, ::1] flat
        cdef float[::1] o
        cdef Py_ssize_t i, n
        arr = np.ascontiguousarray(batch, dtype=np.float32)
        if arr.ndim != 4 or arr.shape[1] * arr.shape[2] * arr.shape[3] != self.n_in \
                or arr.shape[1] != self.planes:
            raise ValueError(f"batch shape {tuple(arr.shape)} does not encode "
                             f"{self.planes} planes of {self.cells} cells")
        n = arr.shape[0]
        out = np.empty(n, dtype=np.float32)
        if n == 0:
            return out
        flat = arr.reshape(n, self.n_in)
        o = out
        with nogil:
            for i in range(n):
                o[i] = <float>self._raw(&flat[i, 0])
        return out
