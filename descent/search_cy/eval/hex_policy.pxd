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
    # the value heads (output policy_value; nets/arch.py), when has_values
    cdef readonly bint has_values
    cdef int hidden                    # the value head's hidden width
    cdef float* vconv                  # the 1x1 convolution to the value features [out][in]
    cdef float* vconv_bias
    cdef float* qhead                  # the 1x1 convolution to the action values
    cdef float qhead_bias
    cdef float* qglobal                # the pooled features' bias on every action value
    cdef float qglobal_bias
    cdef float* vfc                    # the position value's hidden layer [hidden][2 f]
    cdef float* vfc_bias
    cdef float* vhead
    cdef float vhead_bias

    cdef int _load_values(self, dict values, int f) except -1
    cdef int _tower(self, float* a, float* b, float* c) noexcept nogil
    cdef size_t _layer_floats(self) noexcept nogil
    cdef size_t c_scratch_floats(self) noexcept nogil
    cdef int c_forward(self, HexState s, float* logits, float* actions, float* value,
                       float* scratch) noexcept nogil
    cdef void _values(self, const float* o, HexState s, int sym, float* actions,
                      float* value, float* pool) noexcept nogil
    cdef int c_logits(self, HexState s, float* out, float* scratch) noexcept nogil
    cdef bint c_softmax(self, HexState s, float* out) noexcept nogil
    cdef bint c_prior(self, HexState s, float* out, float* scratch) noexcept nogil
