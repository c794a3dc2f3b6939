/* The forward pass of an mlp value network over one encoded position (mlp_eval.pyx).
 *
 * The loops are written for the compiler to vectorise: every step adds one contiguous
 * weight row to an accumulator. The baseline x86-64 build (SSE2) is kept on purpose: an
 * AVX2+FMA clone picked at load time was measured 3-4% faster (EinStein 1.29 against 1.33
 * us a position, dice chess no change: the rows are read from L2/L3, the arithmetic is not
 * the cost), and FMA rounds differently, so searches would differ between CPUs.
 *
 * Layout (set up by mlp_eval.pyx): layer k's weights transposed, widths[k] rows of
 * widths[k+1] floats; plane_sums holds, for each input plane, the sum of its cells' rows
 * of layer 0 (an all-ones plane then costs one row); a and b are scratch of the widest
 * layer. Returns the head's output before any activation.
 */
#ifndef DESCENT_MLP_KERNEL_H
#define DESCENT_MLP_KERNEL_H

#include <stdint.h>
#include <string.h>

static float descent_mlp_forward(const float *x, int planes, int cells, int n_layers,
                                 const int *widths, float *const *weights,
                                 float *const *biases, const float *plane_sums,
                                 float *a, float *b)
{
    float *acc = a, *nxt = b, *swap;
    const float *row;
    const float *w = weights[0];
    int n_out = widths[1], n_in, p, c, e, end, j, i, k, base, full;
    uint64_t bits[4];
    float v;

    for (j = 0; j < n_out; j++)
        acc[j] = biases[0][j];
    for (p = 0; p < planes; p++) {
        base = p * cells;
        full = 1;
        for (c = 0; c < cells; c++) {
            if (x[base + c] != 1.0f) {
                full = 0;
                break;
            }
        }
        if (full) {
            row = plane_sums + (long)p * n_out;
            for (j = 0; j < n_out; j++)
                acc[j] += row[j];
            continue;
        }
        for (c = 0; c < cells; c += 8) {
            /* most inputs are 0: skip eight cells at a time when all their bits are 0 */
            end = c + 8 < cells ? c + 8 : cells;
            if (end - c == 8) {
                memcpy(bits, x + base + c, sizeof bits);
                if ((bits[0] | bits[1] | bits[2] | bits[3]) == 0)
                    continue;
            }
            for (e = c; e < end; e++) {
                v = x[base + e];
                if (v == 0.0f)
                    continue;
                row = w + (long)(base + e) * n_out;
                if (v == 1.0f) {
                    for (j = 0; j < n_out; j++)
                        acc[j] += row[j];
                } else {
                    for (j = 0; j < n_out; j++)
                        acc[j] += v * row[j];
                }
            }
        }
    }
    for (k = 1; k < n_layers; k++) {
        n_in = widths[k];
        n_out = widths[k + 1];
        w = weights[k];
        for (j = 0; j < n_out; j++)
            nxt[j] = biases[k][j];
        for (i = 0; i < n_in; i++) {
            v = acc[i];
            if (v <= 0.0f)          /* ReLU of the layer below: nothing to add */
                continue;
            row = w + (long)i * n_out;
            for (j = 0; j < n_out; j++)
                nxt[j] += v * row[j];
        }
        swap = acc;
        acc = nxt;
        nxt = swap;
    }
    return acc[0];
}

#endif
