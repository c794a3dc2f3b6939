# cython: language_level=3
from descent.search_cy.games.hex cimport HexState


cdef class HexPolicy:
    cdef readonly int n                # board size
    cdef int side                      # the encoding's side (n + 2)
    cdef int plane                     # floats of one padded plane (conv_kernel.h)
    cdef int layers, width
    cdef readonly bint residual
    cdef float** packed                # each convolution's weights, packed for the kernel
    cdef float** biases
    cdef int* cin
    cdef int* cout
    cdef float* head                   # the 1x1 convolution to the logits plane
    cdef float head_bias

    cdef int _tower(self, float* a, float* b, float* c) noexcept nogil
    cdef size_t _layer_floats(self) noexcept nogil
    cdef size_t c_scratch_floats(self) noexcept nogil
    cdef int c_logits(self, HexState s, float* out, float* scratch) noexcept nogil
    cdef bint c_prior(self, HexState s, float* out, float* scratch) noexcept nogil
