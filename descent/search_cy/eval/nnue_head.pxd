# cython: language_level=3
"""The dense head of the NNUE evaluators (nnue_eval.pyx: dice chess, hex_nnue_eval.pyx:
Hex): both views' clamped sums and the context inputs at 1, then fully connected layers
on the mlp kernel."""
from libc.stdint cimport int32_t

from descent.search_cy.eval.evaluator cimport HeuristicEvaluator

cdef enum:
    NNUE_MAX_LAYERS = 6


cdef class NNUEHead(HeuristicEvaluator):
    cdef int width, n_layers
    cdef int widths[NNUE_MAX_LAYERS + 1]
    cdef int stride[NNUE_MAX_LAYERS]   # widths[k + 1] rounded up to DESCENT_MLP_CHUNK
    cdef float* wt[NNUE_MAX_LAYERS]    # layer k transposed: widths[k] rows of stride[k]
    cdef float* b[NNUE_MAX_LAYERS]     # stride[k], zero padded
    cdef const float** rows1           # scratch: a layer's inputs at 1, as weight rows
    cdef const float** rows            # ... its other nonzero inputs
    cdef float* vals                   # ... and their values
    cdef float* h
    cdef readonly bint tanh_output
    cdef readonly double scale
    cdef object layers                 # for spawn

    cdef double _head(self, const int32_t* us, const int32_t* them, int q,
                      const int* context, int n_context) noexcept nogil
    cdef double _finish(self, double raw, int side) noexcept nogil
    cdef object _sums(self, const int32_t* src, int stride)
