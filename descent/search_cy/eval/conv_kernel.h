/* 3x3 convolutions over one position's small square planes (hex_policy.pyx).
 *
 * A search asks for one position at a time, so nothing is amortised over a batch; what
 * costs is keeping the multiply-adds in vector registers. Each plane is stored with a
 * one-cell ring of zeros around it (side + 2 cells a row, DESCENT_CONV_SLACK floats of
 * slack after it), so that the 3x3 neighbourhood of every cell is nine fixed offsets and
 * one loop runs over the plane's rows as a single stretch of floats (the ring's cells in
 * that stretch are computed too, then zeroed again). A pass keeps a tile of
 * DESCENT_CONV_TILE consecutive cells of DESCENT_CONV_OUT output channels in registers
 * while it streams every input channel's nine taps: weights packed per group of
 * DESCENT_CONV_OUT outputs as [in][tap][out] (zero for the outputs past the last).
 *
 * The sums run in a fixed order (bias, then input channel by channel, taps in order), the
 * same whatever the vector width; FMA contraction is off (setup.py: -ffp-contract=off).
 * GCC and Clang build a clone of the tile loop for AVX2 machines beside the plain one
 * (target_clones): the results are the same bits, only faster.
 */
#ifndef DESCENT_CONV_KERNEL_H
#define DESCENT_CONV_KERNEL_H

#include <string.h>

#define DESCENT_CONV_LANES 8            /* floats a vector holds (two SSE registers) */
#define DESCENT_CONV_TILE 16            /* consecutive cells a pass keeps in registers */
#define DESCENT_CONV_OUT 4              /* output channels a pass keeps in registers */
#define DESCENT_CONV_SLACK 32           /* floats after a plane that a tile may overrun */

typedef float descent_cv __attribute__((vector_size(4 * DESCENT_CONV_LANES), aligned(4)));

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DESCENT_CONV_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DESCENT_CONV_CLONES
#endif

/* Floats one padded plane takes (the ring and the slack included). */
static inline int descent_conv_plane(int side)
{
    return (side + 2) * (side + 2) + DESCENT_CONV_SLACK;
}

/* Zeroes the ring of each of ``channels`` planes (and the slack). */
static void descent_conv_ring(float *planes, int channels, int side)
{
    int w = side + 2, plane = descent_conv_plane(side), c, r;
    float *p;
    for (c = 0; c < channels; c++) {
        p = planes + (long)c * plane;
        memset(p, 0, sizeof(float) * w);
        memset(p + (w - 1) * w, 0, sizeof(float) * (w + DESCENT_CONV_SLACK));
        for (r = 1; r < w - 1; r++) {
            p[r * w] = 0.0f;
            p[r * w + w - 1] = 0.0f;
        }
    }
}

/* out = conv3x3(in) + bias (+ add, a residual, when not NULL), then ReLU where relu is
 * set; out's ring zeroed. ``packed`` holds ceil(cout / DESCENT_CONV_OUT) groups of
 * cin * 9 * DESCENT_CONV_OUT weights; ``bias`` cout floats. out must not overlap in. */
DESCENT_CONV_CLONES
static void descent_conv3x3(const float *in, int cin, float *out, int cout, int side,
                            const float *packed, const float *bias, const float *add,
                            int relu)
{
    const int w = side + 2, plane = descent_conv_plane(side);
    const int lo = w + 1, hi = w * (w - 1) - 1;      /* the cells that are not the ring */
    const int off[9] = {-w - 1, -w, -w + 1, -1, 0, 1, w - 1, w, w + 1};
    const int vecs = DESCENT_CONV_TILE / DESCENT_CONV_LANES;
    descent_cv acc[DESCENT_CONV_OUT][DESCENT_CONV_TILE / DESCENT_CONV_LANES], x, wv;
    const float *wg, *src;
    float *dst;
    int g, o, i, t, v, p, q, groups = (cout + DESCENT_CONV_OUT - 1) / DESCENT_CONV_OUT;

    for (g = 0; g < groups; g++) {
        wg = packed + (long)g * cin * 9 * DESCENT_CONV_OUT;
        for (p = lo; p < hi; p += DESCENT_CONV_TILE) {
            for (o = 0; o < DESCENT_CONV_OUT; o++)
                for (v = 0; v < vecs; v++)
                    acc[o][v] = (descent_cv){0} + (g * DESCENT_CONV_OUT + o < cout
                                                   ? bias[g * DESCENT_CONV_OUT + o] : 0.0f);
            for (i = 0; i < cin; i++) {
                src = in + (long)i * plane + p;
                for (t = 0; t < 9; t++) {
                    const float *wt = wg + (i * 9 + t) * DESCENT_CONV_OUT;
                    for (v = 0; v < vecs; v++) {
                        x = *(const descent_cv *)(src + off[t] + v * DESCENT_CONV_LANES);
                        for (o = 0; o < DESCENT_CONV_OUT; o++) {
                            wv = (descent_cv){0} + wt[o];
                            acc[o][v] += wv * x;
                        }
                    }
                }
            }
            for (o = 0; o < DESCENT_CONV_OUT && g * DESCENT_CONV_OUT + o < cout; o++) {
                dst = out + (long)(g * DESCENT_CONV_OUT + o) * plane + p;
                for (v = 0; v < vecs; v++) {
                    x = acc[o][v];
                    if (add != NULL)
                        x += *(const descent_cv *)(add + (long)(g * DESCENT_CONV_OUT + o)
                                                   * plane + p + v * DESCENT_CONV_LANES);
                    if (relu)
                        for (q = 0; q < DESCENT_CONV_LANES; q++)
                            x[q] = x[q] > 0.0f ? x[q] : 0.0f;
                    *(descent_cv *)(dst + v * DESCENT_CONV_LANES) = x;
                }
            }
        }
    }
    descent_conv_ring(out, cout, side);
}

#endif
