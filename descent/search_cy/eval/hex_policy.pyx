# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A Hex move-policy network evaluated in C inside the search (MoHex-CNN's move prior,
and MoHex 3HNN's value heads when it has them).

The network (nets/arch.py, output ``policy``: a ``conv`` or ``resnet`` tower, then a 1x1
convolution to one plane; ``policy_value``: the value heads as well) reads the kernel's
encoding in the side to move's view (Black to move: symmetry 0; White: symmetry 2, the
transpose with the colours exchanged; training's convention, ``train/policy.py``) and
gives a logit to each cell inside the encoding's border. ``c_prior`` turns them into the softmax over the empty cells, in the real frame.
With the value heads, the same pass (``c_forward``) gives each cell's action value and
the position's value, for the side to move.
The convolutions are conv_kernel.h's, over planes with a ring of zeros, without the GIL;
each call takes its own scratch, so threads share one network.
"""
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset
from libc.math cimport exp, tanh

import numpy as np

from descent.search_cy.games.hex cimport HexState

cdef extern from "conv_kernel.h":
    enum: DESCENT_CONV_OUT
    int descent_conv_plane(int side) noexcept nogil
    void descent_conv_ring(float* planes, int channels, int side) noexcept nogil
    void descent_conv3x3(const float* inp, int cin, float* out, int cout, int side,
                         const float* packed, const float* bias, const float* add,
                         int relu) noexcept nogil


cdef float* _floats(size_t n) except NULL:
    cdef float* p = <float*>malloc(max(n, 1) * sizeof(float))
    if p == NULL:
        raise MemoryError()
    memset(p, 0, max(n, 1) * sizeof(float))
    return p


cdef class HexPolicy:
    """A move-policy network for ``n`` x ``n`` Hex.

    ``convs``: the tower's 3x3 convolutions in forward order as (weight (out, in, 3, 3),
    bias (out,)) pairs; ``residual``: 0 for a plain tower, else the tower is a stem and
    residual blocks of two convolutions each (relu(x + conv2(relu(conv1(x))))).
    ``head``: the 1x1 convolution's weight (filters,) and bias. ``values``: the value
    heads' weights by model-file name (``vconv``, ``qhead``, ``qglobal``, ``vfc``,
    ``vhead``; nets/arch.py), or None for a policy alone.
    """

    def __cinit__(self, int n, list convs, head_weight, double head_bias, bint residual=False,
                  dict values=None):
        cdef int k, o, i, t, g, groups, cin, cout
        if n < 2 or not convs:
            raise ValueError("a Hex policy needs a board size >= 2 and convolutions")
        self.n = n
        self.side = n + 2
        self.plane = descent_conv_plane(self.side)
        self.layers = len(convs)
        self.residual = residual
        self.packed = <float**>malloc(self.layers * sizeof(float*))
        self.biases = <float**>malloc(self.layers * sizeof(float*))
        self.cin = <int*>malloc(self.layers * sizeof(int))
        self.cout = <int*>malloc(self.layers * sizeof(int))
        if (self.packed == NULL or self.biases == NULL or self.cin == NULL
                or self.cout == NULL):
            raise MemoryError()
        for k in range(self.layers):
            self.packed[k] = NULL
            self.biases[k] = NULL
        self.width = 0
        for k, (weight, bias) in enumerate(convs):
            w = np.asarray(weight, np.float32)
            b = np.asarray(bias, np.float32)
            if w.ndim != 4 or w.shape[2:] != (3, 3) or b.shape != (w.shape[0],):
                raise ValueError(f"convolution {k}: weight {w.shape} and bias {b.shape} "
                                 "are not a 3x3 convolution's")
            cout, cin = w.shape[0], w.shape[1]
            if k == 0 and cin != 3 or k > 0 and cin != self.cout[k - 1]:
                raise ValueError(f"convolution {k} reads {cin} planes, not what comes in")
            self.cin[k] = cin
            self.cout[k] = cout
            self.width = max(self.width, cout)
            groups = (cout + DESCENT_CONV_OUT - 1) // DESCENT_CONV_OUT
            self.packed[k] = _floats(<size_t>groups * cin * 9 * DESCENT_CONV_OUT)
            self.biases[k] = _floats(cout)
            for o in range(cout):
                self.biases[k][o] = b[o]
                g = o // DESCENT_CONV_OUT
                for i in range(cin):
                    for t in range(9):
                        self.packed[k][((g * cin + i) * 9 + t) * DESCENT_CONV_OUT
                                       + o % DESCENT_CONV_OUT] = w[o, i, t // 3, t % 3]
        if residual and (self.layers % 2 != 1 or any(
                self.cout[k] != self.cout[0] for k in range(self.layers))):
            raise ValueError("a residual tower is a stem and pairs of convolutions of one "
                             "width")
        hw = np.asarray(head_weight, np.float32).reshape(-1)
        if hw.shape != (self.cout[self.layers - 1],):
            raise ValueError(f"the head reads {hw.shape[0]} planes, the tower gives "
                             f"{self.cout[self.layers - 1]}")
        self.head = _floats(hw.shape[0])
        for o in range(hw.shape[0]):
            self.head[o] = hw[o]
        self.head_bias = <float>head_bias
        self.has_values = values is not None
        if self.has_values:
            self._load_values(values, hw.shape[0])

    cdef int _load_values(self, dict values, int f) except -1:
        """Checks and copies the value heads' weights for a tower of ``f`` planes."""
        cdef int i, k
        try:
            vconv = np.asarray(values["vconv.weight"], np.float32).reshape(f, f)
            vconv_b = np.asarray(values["vconv.bias"], np.float32).reshape(f)
            qhead = np.asarray(values["qhead.weight"], np.float32).reshape(f)
            qhead_b = np.asarray(values["qhead.bias"], np.float32).reshape(1)
            qglobal = np.asarray(values["qglobal.weight"], np.float32).reshape(2 * f)
            qglobal_b = np.asarray(values["qglobal.bias"], np.float32).reshape(1)
            vfc = np.asarray(values["vfc.weight"], np.float32)
            vfc_b = np.asarray(values["vfc.bias"], np.float32)
            vhead = np.asarray(values["vhead.weight"], np.float32)
            vhead_b = np.asarray(values["vhead.bias"], np.float32).reshape(1)
        except (KeyError, ValueError) as exc:
            raise ValueError(f"the value heads do not fit a tower of {f} planes: {exc}") \
                from None
        if vfc.ndim != 2 or vfc.shape[1] != 2 * f or vfc_b.shape != (vfc.shape[0],) \
                or vhead.size != vfc.shape[0]:
            raise ValueError(f"the value's hidden layer {vfc.shape} does not read the "
                             f"{2 * f} pooled features")
        self.hidden = vfc.shape[0]
        self.vconv = _floats(f * f)
        self.vconv_bias = _floats(f)
        self.qhead = _floats(f)
        self.qglobal = _floats(2 * f)
        self.vfc = _floats(self.hidden * 2 * f)
        self.vfc_bias = _floats(self.hidden)
        self.vhead = _floats(self.hidden)
        for i in range(f):
            self.vconv_bias[i] = vconv_b[i]
            self.qhead[i] = qhead[i]
            for k in range(f):
                self.vconv[i * f + k] = vconv[i, k]
        for i in range(2 * f):
            self.qglobal[i] = qglobal[i]
        for k in range(self.hidden):
            self.vfc_bias[k] = vfc_b[k]
            self.vhead[k] = vhead.reshape(-1)[k]
            for i in range(2 * f):
                self.vfc[k * 2 * f + i] = vfc[k, i]
        self.qhead_bias = qhead_b[0]
        self.qglobal_bias = qglobal_b[0]
        self.vhead_bias = vhead_b[0]
        return 0

    def __dealloc__(self):
        cdef int k
        if self.packed != NULL:
            for k in range(self.layers):
                free(self.packed[k])
                free(self.biases[k])
        free(self.packed)
        free(self.biases)
        free(self.cin)
        free(self.cout)
        free(self.head)
        free(self.vconv)
        free(self.vconv_bias)
        free(self.qhead)
        free(self.qglobal)
        free(self.vfc)
        free(self.vfc_bias)
        free(self.vhead)

    cdef int _tower(self, float* a, float* b, float* c) noexcept nogil:
        """Runs the tower from planes ``a`` (the input); returns which of a (0), b (1) or
        c (2) holds its output."""
        cdef int k, x = 0
        cdef float* bufs[3]
        bufs[0] = a
        bufs[1] = b
        bufs[2] = c
        descent_conv3x3(bufs[0], self.cin[0], bufs[1], self.cout[0], self.n + 2,
                        self.packed[0], self.biases[0], NULL, 1)
        x = 1
        k = 1
        while k < self.layers:
            if self.residual:
                # t = relu(conv1(x)) into the free buffer, then relu(conv2(t) + x)
                descent_conv3x3(bufs[x], self.cin[k], bufs[(x + 1) % 3], self.cout[k],
                                self.n + 2, self.packed[k], self.biases[k], NULL, 1)
                descent_conv3x3(bufs[(x + 1) % 3], self.cin[k + 1], bufs[(x + 2) % 3],
                                self.cout[k + 1], self.n + 2, self.packed[k + 1],
                                self.biases[k + 1], bufs[x], 1)
                x = (x + 2) % 3
                k += 2
            else:
                descent_conv3x3(bufs[x], self.cin[k], bufs[(x + 1) % 3], self.cout[k],
                                self.n + 2, self.packed[k], self.biases[k], NULL, 1)
                x = (x + 1) % 3
                k += 1
        return x

    cdef size_t c_scratch_floats(self) noexcept nogil:
        """The floats of scratch memory one pass needs: the encoding and three planes
        of the widest layer's channels (and, for the value heads, the pooled features,
        the hidden layer and one plane)."""
        cdef int w = self.n + 2
        cdef size_t heads = 0
        if self.has_values:
            heads = <size_t>2 * self.cout[self.layers - 1] + self.hidden + self.plane
        return <size_t>3 * w * w + 3 * self._layer_floats() + heads

    cdef size_t _layer_floats(self) noexcept nogil:
        return <size_t>3 * self.plane if self.width < 3 else <size_t>self.width * self.plane

    cdef int c_forward(self, HexState s, float* logits, float* actions, float* value,
                       float* scratch) noexcept nogil:
        """One pass over ``s``: the logit of every cell into ``logits`` (real frame,
        ``n * n`` floats, occupied cells included) and, with the value heads, every cell's
        action value into ``actions`` (the same frame) and the position's value into
        ``value[0]``, both in [-1, 1] for the side to move (any of the three NULL: not
        wanted). ``scratch``: c_scratch_floats floats (NULL: its own, allocated for the
        call). -1 when out of memory, else the symmetry it read the position in. Threads
        share a network, each with its own scratch."""
        cdef int n = self.n, w = self.n + 2, sym = 0 if s.side == 0 else 2
        cdef int plane = self.plane, f, r, c, cell, top
        cdef size_t size = self._layer_floats()
        cdef float* own = NULL
        cdef float* enc
        cdef float* bufs
        cdef float* o
        cdef float v
        if scratch == NULL:
            own = <float*>malloc(self.c_scratch_floats() * sizeof(float))
            if own == NULL:
                return -1
            scratch = own
        bufs = scratch
        enc = scratch + 3 * size
        s.c_encode(enc, sym)
        memset(bufs, 0, size * sizeof(float))
        for f in range(3):
            for r in range(w):
                memcpy(bufs + f * plane + (r + 1) * (w + 2) + 1, enc + (f * w + r) * w,
                       w * sizeof(float))
        top = self._tower(bufs, bufs + size, bufs + 2 * size)
        o = bufs + top * size
        if logits != NULL:
            for r in range(n):
                for c in range(n):
                    # the encoding's cell (r + 1, c + 1) is the padded plane's (r + 2, c + 2)
                    v = self.head_bias
                    for f in range(self.cout[self.layers - 1]):
                        v = v + self.head[f] * o[f * plane + (r + 2) * (w + 2) + c + 2]
                    cell = s.c_sym_action(r * n + c, sym)    # sym 0 and 2 are involutions
                    logits[cell] = v
        if self.has_values and (actions != NULL or value != NULL):
            self._values(o, s, sym, actions, value, enc + 3 * w * w)
        free(own)
        return sym

    cdef void _values(self, const float* o, HexState s, int sym, float* actions,
                      float* value, float* pool) noexcept nogil:
        """The value heads over the tower's output ``o`` (read in symmetry ``sym``), with
        ``pool`` as scratch (2 f + hidden + one plane floats)."""
        cdef int f = self.cout[self.layers - 1], n = self.n, w = self.n + 2
        cdef int plane = self.plane, i, j, k, r, c, t, cell
        cdef int lo = w + 2 + 1, hi = w * (w + 2) + w + 1   # the encoding's cells' stretch
        cdef float* hid = pool + 2 * f
        cdef float* h = hid + self.hidden
        cdef const float* src
        cdef float wij, x
        cdef double g
        for i in range(f):
            pool[i] = 0.0
            pool[f + i] = 0.0          # a maximum of ReLU outputs is never below 0
        for i in range(f):
            # the value feature i over the stretch of the encoding's rows (the ring's
            # cells in it computed too, then left out of the pool)
            for t in range(lo, hi):
                h[t] = self.vconv_bias[i]
            for j in range(f):
                wij = self.vconv[i * f + j]
                src = o + j * plane
                for t in range(lo, hi):
                    h[t] = h[t] + wij * src[t]
            for r in range(w):
                for c in range(w):
                    x = h[(r + 1) * (w + 2) + c + 1]
                    if x > 0.0:
                        pool[i] += x
                        if x > pool[f + i]:
                            pool[f + i] = x
            pool[i] = pool[i] / (w * w)
        if value != NULL:
            g = self.vhead_bias
            for k in range(self.hidden):
                x = self.vfc_bias[k]
                for i in range(2 * f):
                    x = x + self.vfc[k * 2 * f + i] * pool[i]
                if x > 0.0:
                    g += self.vhead[k] * x
            value[0] = <float>tanh(g)
        if actions != NULL:
            g = self.qglobal_bias + self.qhead_bias
            for i in range(2 * f):
                g += self.qglobal[i] * pool[i]
            for r in range(n):
                for c in range(n):
                    x = <float>g
                    for i in range(f):
                        x = x + self.qhead[i] * o[i * plane + (r + 2) * (w + 2) + c + 2]
                    cell = s.c_sym_action(r * n + c, sym)
                    actions[cell] = <float>tanh(x)

    cdef int c_logits(self, HexState s, float* out, float* scratch) noexcept nogil:
        """The logit of every cell of ``s`` (c_forward's, without the values)."""
        return self.c_forward(s, out, NULL, NULL, scratch)

    cdef bint c_softmax(self, HexState s, float* out) noexcept nogil:
        """The logits in ``out`` turned into the softmax over the empty cells of ``s``
        (0 on occupied cells)."""
        cdef int i
        cdef float top = -1e30
        cdef double total = 0.0
        for i in range(self.n * self.n):
            if s.cells[i] == 0 and out[i] > top:
                top = out[i]
        for i in range(self.n * self.n):
            if s.cells[i] == 0:
                out[i] = <float>exp(out[i] - top)
                total += out[i]
            else:
                out[i] = 0.0
        if total > 0.0:
            for i in range(self.n * self.n):
                out[i] = <float>(out[i] / total)
        return True

    cdef bint c_prior(self, HexState s, float* out, float* scratch) noexcept nogil:
        """The softmax of the logits over the empty cells of ``s`` into ``out`` (``n * n``
        floats, 0 on occupied cells), with ``scratch`` as c_forward; False when out of
        memory."""
        if self.c_logits(s, out, scratch) < 0:
            return False
        return self.c_softmax(s, out)

    def logits(self, HexState state) -> np.ndarray:
        """The logit of every cell of ``state`` (real frame), as float32."""
        self._check(state)
        out = np.zeros(self.n * self.n, np.float32)
        cdef float[::1] view = out
        if self.c_logits(state, &view[0], NULL) < 0:
            raise MemoryError()
        return out

    def probabilities(self, HexState state) -> np.ndarray:
        """The prior over the cells of ``state``: the softmax over its empty cells."""
        self._check(state)
        out = np.zeros(self.n * self.n, np.float32)
        cdef float[::1] view = out
        if not self.c_prior(state, &view[0], NULL):
            raise MemoryError()
        return out

    def values(self, HexState state) -> tuple:
        """(each cell's action value (real frame, float32), the position's value), both
        for the side to move; a network without value heads raises ValueError."""
        self._check(state)
        if not self.has_values:
            raise ValueError("this policy network has no value heads")
        actions = np.zeros(self.n * self.n, np.float32)
        cdef float[::1] view = actions
        cdef float value = 0.0
        if self.c_forward(state, NULL, &view[0], &value, NULL) < 0:
            raise MemoryError()
        return actions, float(value)

    def _check(self, HexState state) -> None:
        if state.n != self.n:
            raise ValueError(f"a {self.n}x{self.n} policy cannot read a {state.n}x{state.n} "
                             "board")
