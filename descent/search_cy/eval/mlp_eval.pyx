# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A fully connected value network evaluated in C inside the search (the ``native`` backend).

The ``mlp`` architecture (nets/arch.py) reads the kernel's 0/1 input planes flattened. A
position sets a few dozen of those inputs (a piece on a square), plus a few planes that are
all ones (side to move, the pending die). So the first layer is a sum of weight rows: one
row per set input, and one precomputed row sum per all-ones plane. That is about 10
(EinStein) to 35 (dice chess) rows of the first width (sampled positions), not a dense
product over 475 or 1536 inputs. The deeper layers skip the units that ReLU zeroed. Every
layer is stored transposed (input-major), so each step adds one contiguous row to
accumulators kept in vector registers (mlp_kernel.h says how).

Values come out exactly as nets.evaluator.NetworkFunction and BatchEvaluator would give
them: raw output (tanh if the model has it) times scale, negated when the model speaks for
the side to move and player 1 is to move, clipped to [lo, hi], negated back for a
colour-swapping input symmetry. Each value is computed at ``c_add`` without the GIL and
with no Python call, from the state's list form (``GameState.c_features``: no planes to
write and scan) where its game has one, else from its planes; both give the same bits.

One evaluator keeps one scratch buffer: it serves one search at a time (as every evaluator
does).
"""
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset
from libc.math cimport tanh

import numpy as np

from descent.search_cy.games.state cimport GameState
from descent.search_cy.eval.evaluator cimport HeuristicEvaluator

cdef extern from "mlp_kernel.h":
    enum: DESCENT_MLP_CHUNK
    float* descent_mlp_zeros(size_t n) noexcept nogil
    enum: DESCENT_MLP_MAX_LAYERS
    ctypedef struct descent_mlp:
        int planes, cells, n_layers
        int widths[DESCENT_MLP_MAX_LAYERS + 1]
        int stride[DESCENT_MLP_MAX_LAYERS]
        float* weights[DESCENT_MLP_MAX_LAYERS]
        float* biases[DESCENT_MLP_MAX_LAYERS]
        float* plane_sums
        const float** rows1
        const float** rows
        float* vals
        float* h
        int* full
    float descent_mlp_dense(const descent_mlp* m, float* x) noexcept nogil
    float descent_mlp_sparse(const descent_mlp* m, int* f, int nf) noexcept nogil


cdef class MLPEvaluator(HeuristicEvaluator):
    """Values states with an mlp network in C (player 0's view, within [lo, hi]).

    ``layers``: [(weight, bias), ...] in forward order, weight shaped (out, in) as in the
    model file, the last layer having one output; ReLU after every layer but the last.
    ``to_move_plane`` >= 0 when the outputs are in the side to move's view (the plane that
    is all ones when player 0 is to move in the encoded frame). ``list_form=False`` values
    every state from its planes even where its game has a list form (for comparisons).
    """

    cdef descent_mlp net                 # weights and kernel scratch (mlp_kernel.h)
    cdef int n_in, max_width, to_move_plane
    cdef float* x                        # encoded position, zero padded to a multiple of 8
    cdef int* f                          # the position as a list (GameState.c_features)
    cdef readonly int symmetry
    cdef readonly bint list_form
    cdef readonly bint tanh_output
    cdef readonly double scale
    cdef object prototype                # a state of the game and the loaded layers, for
    cdef object layers                   # spawn (another instance for another thread)

    def __cinit__(self, *args, **kwargs):
        memset(&self.net, 0, sizeof(descent_mlp))
        self.x = NULL
        self.f = NULL

    def __init__(self, GameState prototype, layers, *, bint tanh_output, double scale=1.0,
                 double lo=-1.0, double hi=1.0, int to_move_plane=-1, int symmetry=0,
                 bint list_form=True):
        if not lo < hi:
            raise ValueError("bounds need lo < hi")
        if not 0 <= symmetry < prototype.num_symmetries:
            raise ValueError(f"symmetry {symmetry} out of range 0..{prototype.num_symmetries - 1}")
        if not -1 <= to_move_plane < prototype.num_planes:
            raise ValueError(f"to_move_plane {to_move_plane} is not a plane of the encoding")
        self.net.planes = prototype.num_planes
        self.net.cells = prototype.height * prototype.width
        self.n_in = self.net.planes * self.net.cells
        self.lo = lo
        self.hi = hi
        self.scale = scale
        self.tanh_output = tanh_output
        self.to_move_plane = to_move_plane
        self.symmetry = symmetry
        self.list_form = list_form
        self.prototype = prototype
        self.load(layers)

    def __dealloc__(self):
        self._release()

    cdef void _release(self) noexcept:
        cdef int k
        for k in range(DESCENT_MLP_MAX_LAYERS):
            free(self.net.weights[k])
            free(self.net.biases[k])
            self.net.weights[k] = NULL
            self.net.biases[k] = NULL
        free(self.net.plane_sums)
        free(self.net.rows1)
        free(self.net.rows)
        free(self.net.vals)
        free(self.net.h)
        free(self.net.full)
        free(self.x)
        free(self.f)
        self.net.plane_sums = self.net.vals = self.net.h = self.x = NULL
        self.net.rows1 = self.net.rows = NULL
        self.net.full = self.f = NULL
        self.net.n_layers = 0

    def spawn(self):
        """The same network in a second instance (its own kernel scratch), for another
        search thread."""
        fresh = MLPEvaluator(self.prototype, self.layers, tanh_output=self.tanh_output,
                             scale=self.scale, lo=self.lo, hi=self.hi,
                             to_move_plane=self.to_move_plane, symmetry=self.symmetry,
                             list_form=self.list_form)
        return fresh

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
        if not 2 <= len(layers) <= DESCENT_MLP_MAX_LAYERS:
            raise ValueError(f"an mlp needs 2 to {DESCENT_MLP_MAX_LAYERS} layers "
                             f"(hidden + head), got {len(layers)}")
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
        self.layers = layers
        self.net.n_layers = len(checked)
        self.net.widths[0] = self.n_in
        self.max_width = self.n_in
        for k, (wt, bias) in enumerate(checked):
            n_in, n_out = wt.shape[0], wt.shape[1]
            self.net.widths[k + 1] = n_out
            self.net.stride[k] = ((n_out + DESCENT_MLP_CHUNK - 1) // DESCENT_MLP_CHUNK
                                  * DESCENT_MLP_CHUNK)
            self.max_width = max(self.max_width, self.net.stride[k])
            self.net.weights[k] = descent_mlp_zeros(n_in * self.net.stride[k])
            self.net.biases[k] = descent_mlp_zeros(self.net.stride[k])
            if self.net.weights[k] == NULL or self.net.biases[k] == NULL:
                self._release()
                raise MemoryError()
            wv = wt
            bv = bias
            for i in range(n_in):
                memcpy(self.net.weights[k] + i * self.net.stride[k], &wv[i, 0],
                       n_out * sizeof(float))
            memcpy(self.net.biases[k], &bv[0], n_out * sizeof(float))
        n_out = self.net.stride[0]
        # a list form may hold up to n_in + planes entries (GameState.c_features)
        self.max_width = max(self.max_width, self.n_in + self.net.planes)
        self.net.plane_sums = descent_mlp_zeros(self.net.planes * n_out)
        self.net.rows1 = <const float**>malloc(self.max_width * sizeof(float*))
        self.net.rows = <const float**>malloc(self.max_width * sizeof(float*))
        self.net.vals = <float*>malloc(self.max_width * sizeof(float))
        self.net.h = descent_mlp_zeros(self.max_width)
        self.net.full = <int*>malloc(self.net.planes * sizeof(int))
        self.x = descent_mlp_zeros((self.n_in + 7) // 8 * 8)
        self.f = <int*>malloc((self.n_in + self.net.planes) * sizeof(int))
        if self.net.plane_sums == NULL or self.net.rows1 == NULL or self.net.rows == NULL \
                or self.net.vals == NULL or self.net.h == NULL or self.net.full == NULL \
                or self.x == NULL or self.f == NULL:
            self._release()
            raise MemoryError()
        w = self.net.weights[0]
        for i in range(self.net.planes):
            for c in range(self.net.cells):
                for j in range(n_out):
                    self.net.plane_sums[i * n_out + j] += w[(i * self.net.cells + c) * n_out + j]

    @property
    def widths_(self) -> tuple:
        """(inputs, hidden widths..., 1)."""
        return tuple(self.net.widths[k] for k in range(self.net.n_layers + 1))

    cdef inline double _out(self, double raw) noexcept nogil:
        if self.tanh_output:
            return tanh(raw)
        return raw

    cdef double c_heuristic(self, GameState s) noexcept nogil:
        cdef double v
        cdef bint flip = False
        cdef int i, nf = s.c_features(self.f, self.symmetry) if self.list_form else -1
        if nf >= 0:
            # the list form: no dense encoding to write and scan
            if self.to_move_plane >= 0:
                flip = True
                for i in range(nf):
                    if self.f[i] == self.n_in + self.to_move_plane:
                        flip = False
            v = self._out(descent_mlp_sparse(&self.net, self.f, nf))
        else:
            s.c_encode(self.x, self.symmetry)
            flip = self.to_move_plane >= 0 and self.x[self.to_move_plane * self.net.cells] < 0.5
            v = self._out(descent_mlp_dense(&self.net, self.x))
        v *= self.scale
        if flip:
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
                or arr.shape[1] != self.net.planes:
            raise ValueError(f"batch shape {tuple(arr.shape)} does not encode "
                             f"{self.net.planes} planes of {self.net.cells} cells")
        n = arr.shape[0]
        out = np.empty(n, dtype=np.float32)
        if n == 0:
            return out
        flat = arr.reshape(n, self.n_in)
        o = out
        with nogil:
            for i in range(n):
                memcpy(self.x, &flat[i, 0], self.n_in * sizeof(float))
                o[i] = <float>self._out(descent_mlp_dense(&self.net, self.x))
        return out
