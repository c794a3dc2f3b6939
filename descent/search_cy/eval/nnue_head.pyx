# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The dense head the NNUE evaluators share (see nnue_head.pxd).

The head reads both views' accumulators (the side to move's first), each unit clamped to
[0, 1] after dividing by the quantisation Q, then ``n_context`` inputs at 1 given by their
index past the two views (dice chess's die, castling rights and en passant; Hex has
none). The mlp kernel (mlp_kernel.h) takes a layer's inputs as lists of weight rows:
those at 1 (saturated units, the context) are added without a multiplication, the zeros
skipped, 16 outputs a pass in vector registers.
"""
from libc.stdint cimport int32_t
from libc.stdlib cimport malloc, free
from libc.math cimport tanh

cdef extern from "mlp_kernel.h":
    enum: DESCENT_MLP_CHUNK
    float* descent_mlp_zeros(size_t n) noexcept nogil
    void descent_mlp_chunk(const float* bias, const float* const* rows1, int n1,
                           const float* const* rows, const float* vals, int n, int off,
                           float* out) noexcept nogil

import numpy as np

MAX_LAYERS = NNUE_MAX_LAYERS


cdef class NNUEHead(HeuristicEvaluator):
    """A head over ``2 * width + context`` inputs; subclasses keep the accumulators and
    call ``_setup_head`` from their ``__init__``."""

    def __cinit__(self, *args, **kwargs):
        self.n_layers = 0
        self.rows1 = self.rows = NULL
        self.vals = self.h = NULL

    @staticmethod
    def _transformer(ft_weight, ft_bias, int features, str what, int max_width, int q):
        """The feature transformer checked: (weight, bias as float64 for spawn; weight
        (features, width) and bias (width,) as int16, times ``q``). Its weight maps
        ``features`` inputs (``what`` names them in the error), its width is a multiple of
        16 up to ``max_width``, its values whole multiples of 1 / q within int16's range."""
        ftw = np.asarray(ft_weight, dtype=np.float64)
        ftb = np.asarray(ft_bias, dtype=np.float64).reshape(-1)
        if ftw.ndim != 2 or ftw.shape[1] != features or ftb.shape[0] != ftw.shape[0]:
            raise ValueError(f"feature transformer: weight {tuple(ftw.shape)} and bias "
                             f"{tuple(ftb.shape)} do not map {what}")
        width = ftw.shape[0]
        if width % 16 or not 16 <= width <= max_width:
            raise ValueError(f"feature transformer width {width}: a multiple of 16 from 16 "
                             f"to {max_width}")
        qw, qb = ftw * q, ftb * q
        for name, x in (("weight", qw), ("bias", qb)):
            if not np.isfinite(x).all() or (x != np.round(x)).any() \
                    or np.abs(x).max(initial=0) > 32767:
                raise ValueError(f"feature transformer {name}: not whole multiples of "
                                 f"1/{q} within int16's range (quantise_nnue)")
        return (ftw, ftb, np.ascontiguousarray(qw.T, dtype=np.int16),
                np.ascontiguousarray(qb, dtype=np.int16))

    def _setup_head(self, int width, int context, layers, *, bint tanh_output,
                    double scale, double lo, double hi):
        """Checks and packs ``layers`` [(weight, bias), ...] (forward order, the first
        taking 2 * width + context inputs, the last giving one output)."""
        cdef int k, i, j, n, widest
        cdef float[:, ::1] wv
        if not lo < hi:
            raise ValueError("bounds need lo < hi")
        layers = [(np.ascontiguousarray(w, dtype=np.float32),
                   np.ascontiguousarray(bb, dtype=np.float32).reshape(-1)) for w, bb in layers]
        if not 1 <= len(layers) <= NNUE_MAX_LAYERS:
            raise ValueError(f"an NNUE head has 1 to {NNUE_MAX_LAYERS} layers, got "
                             f"{len(layers)}")
        n = 2 * width + context
        for k, (w, bb) in enumerate(layers):
            if w.ndim != 2 or w.shape[1] != n or bb.shape[0] != w.shape[0]:
                raise ValueError(f"head layer {k}: weight {tuple(w.shape)} and bias "
                                 f"{tuple(bb.shape)} do not take {n} inputs")
            if not (np.isfinite(w).all() and np.isfinite(bb).all()):
                raise ValueError(f"head layer {k}: weights are not all finite")
            n = w.shape[0]
        if n != 1:
            raise ValueError(f"the last layer has {n} outputs, a value network has 1")
        self.lo, self.hi = lo, hi
        self.tanh_output = tanh_output
        self.scale = scale
        self.layers = layers
        self.width = width
        self.n_layers = len(layers)
        self.widths[0] = 2 * width + context
        widest = self.widths[0]
        for k, (w, bb) in enumerate(layers):
            self.widths[k + 1] = w.shape[0]
            self.stride[k] = ((w.shape[0] + DESCENT_MLP_CHUNK - 1) // DESCENT_MLP_CHUNK
                              * DESCENT_MLP_CHUNK)
            widest = max(widest, self.stride[k])
            self.wt[k] = descent_mlp_zeros(w.shape[1] * self.stride[k])
            self.b[k] = descent_mlp_zeros(self.stride[k])
            if self.wt[k] == NULL or self.b[k] == NULL:
                raise MemoryError()
            wv = np.ascontiguousarray(w.T)
            for i in range(w.shape[1]):
                for j in range(w.shape[0]):
                    self.wt[k][i * self.stride[k] + j] = wv[i, j]
            for j in range(w.shape[0]):
                self.b[k][j] = bb[j]
        self.rows1 = <const float**>malloc(widest * sizeof(float*))
        self.rows = <const float**>malloc(widest * sizeof(float*))
        self.vals = <float*>malloc(widest * sizeof(float))
        self.h = descent_mlp_zeros(widest)
        if self.rows1 == NULL or self.rows == NULL or self.vals == NULL or self.h == NULL:
            raise MemoryError()

    def __dealloc__(self):
        cdef int k
        for k in range(self.n_layers):
            free(self.wt[k])
            free(self.b[k])
        free(self.rows1)
        free(self.rows)
        free(self.vals)
        free(self.h)

    @property
    def widths_(self) -> tuple:
        """(accumulator width, head inputs, head widths..., 1)."""
        return (self.width,) + tuple(self.widths[k] for k in range(self.n_layers + 1))

    cdef double _head(self, const int32_t* us, const int32_t* them, int q,
                      const int* context, int n_context) noexcept nogil:
        """The raw output (before tanh) from both views' accumulators (quantised by
        ``q``) and the context inputs at 1 (indices past the two views)."""
        cdef int n1 = 0, n = 0, i, j, k, width = self.width, stride = self.stride[0]
        cdef const float* w = self.wt[0]
        cdef const int32_t* a
        cdef float inv_q = 1.0 / q
        cdef const float* row
        cdef int32_t x
        for k in range(2):
            # compacted without a branch per unit (the mlp kernel's way): a unit clamped
            # to 1 adds its row alone, one in (0, 1) its row times its value, 0 nothing
            a = us if k == 0 else them
            for i in range(width):
                x = a[i]
                row = w + (k * width + i) * stride
                self.rows1[n1] = row
                n1 += x >= q
                self.rows[n] = row
                self.vals[n] = x * inv_q
                n += (x > 0) & (x < q)
        for i in range(n_context):
            self.rows1[n1] = w + (2 * width + context[i]) * stride
            n1 += 1
        k = 0
        while True:
            j = 0
            while j < self.widths[k + 1]:
                descent_mlp_chunk(self.b[k] + j, self.rows1, n1, self.rows, self.vals, n, j,
                                  self.h + j)
                j += DESCENT_MLP_CHUNK
            if k + 1 == self.n_layers:
                return self.h[0]
            n1 = n = 0
            for j in range(self.widths[k + 1]):   # the next layer's nonzero inputs
                self.rows[n] = self.wt[k + 1] + j * self.stride[k + 1]
                self.vals[n] = self.h[j]
                n += self.h[j] > 0.0
            k += 1

    cdef object _sums(self, const int32_t* src, int stride):
        """Both views' sums (``stride`` apart at ``src``) as a (2, width) int32 array."""
        out = np.empty((2, self.width), dtype=np.int32)
        cdef int32_t[:, ::1] o = out
        cdef int k, j
        for k in range(2):
            for j in range(self.width):
                o[k, j] = src[k * stride + j]
        return out

    cdef double _finish(self, double raw, int side) noexcept nogil:
        """The value in player 0's view within [lo, hi] from the raw output for ``side``."""
        cdef double v = (tanh(raw) if self.tanh_output else raw) * self.scale
        if side == 1:
            v = -v
        if v < self.lo:
            return self.lo
        if v > self.hi:
            return self.hi
        return v
