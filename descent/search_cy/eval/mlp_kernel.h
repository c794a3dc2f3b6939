/* The forward pass of an mlp value network over one encoded position (mlp_eval.pyx).
 *
 * Written for what a search asks of it: one position at a time, a few dozen set inputs,
 * nothing to amortise over a batch. Three things cost most in a plain loop nest, and all
 * three are avoided here (valgrind, the shipped networks, dense path, positions in search
 * order: 9,500 instructions a position down to 6,100 for EinStein, 19,400 to 11,400 for
 * dice chess):
 *   - data-dependent branches (which inputs are set, which ReLUs are zero): the inputs and
 *     hidden units are first compacted into lists of rows without a branch per element;
 *   - accumulators in memory: each pass keeps CHUNK outputs in vector registers (GCC/Clang
 *     vector extensions: SSE2 on x86-64, NEON on arm64, no intrinsics) while it streams
 *     the listed weight rows, then stores them once;
 *   - multiplications by 1: layer 0's inputs are 0/1, their rows are just added.
 * The sums are in a fixed order (bias, inputs that are 1 by index, all-ones planes, then
 * any other values), so a value does not depend on the positions valued before it; FMA
 * contraction is off (setup.py: -ffp-contract=off), so it does not depend on the CPU.
 *
 * Two ways in: descent_mlp_dense reads the encoded planes, descent_mlp_sparse the list of
 * set inputs and all-ones planes that a game's c_features gives (EinStein, dice chess),
 * which spares writing and scanning planes that are almost all zeros.
 *
 * Layout (set up by mlp_eval.pyx): layer k's weights transposed, one row per input of
 * stride[k] floats (its output width rounded up to CHUNK, zero padded, 64-byte aligned);
 * plane_sums holds, for each input plane, the sum of its cells' rows of layer 0 (an
 * all-ones plane then costs one row). Both return the head's output before any
 * activation.
 */
#ifndef DESCENT_MLP_KERNEL_H
#define DESCENT_MLP_KERNEL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DESCENT_MLP_LANES 4             /* floats a vector holds: SSE2, NEON */
#define DESCENT_MLP_CHUNK 16            /* outputs a pass keeps in registers */
#define DESCENT_MLP_ACC (DESCENT_MLP_CHUNK / DESCENT_MLP_LANES)

typedef float descent_vf __attribute__((vector_size(4 * DESCENT_MLP_LANES)));

/* n floats, zeroed, 64-byte aligned (the kernel loads whole vectors of a row); NULL when
 * out of memory. */
static inline float *descent_mlp_zeros(size_t n)
{
    size_t size = (n * sizeof(float) + 63) / 64 * 64;
    float *p = (float *)aligned_alloc(64, size);
    if (p)
        memset(p, 0, size);
    return p;
}

/* out[0..CHUNK) = bias + sum_r rows1[r][0..CHUNK) + sum_r vals[r] * rows[r][0..CHUNK):
 * the inputs that are 1 need no multiplication (most of layer 0's). */
static void descent_mlp_chunk(const float *bias, const float *const *rows1, int n1,
                              const float *const *rows, const float *vals, int n, int off,
                              float *out)
{
    descent_vf s[DESCENT_MLP_ACC], v;
    const float *row;
    int r, q;

    memcpy(s, bias, sizeof s);
    for (r = 0; r < n1; r++) {
        row = rows1[r] + off;
        for (q = 0; q < DESCENT_MLP_ACC; q++)
            s[q] += ((const descent_vf *)row)[q];
    }
    for (r = 0; r < n; r++) {
        row = rows[r] + off;
        v = vals[r] - (descent_vf){0};
        for (q = 0; q < DESCENT_MLP_ACC; q++)
            s[q] += v * ((const descent_vf *)row)[q];
    }
    memcpy(out, s, sizeof s);
}

/* One network and its scratch (mlp_eval.pyx owns the memory). */
#define DESCENT_MLP_MAX_LAYERS 8
typedef struct {
    int planes, cells, n_layers;
    int widths[DESCENT_MLP_MAX_LAYERS + 1];  /* inputs, then each layer's outputs */
    int stride[DESCENT_MLP_MAX_LAYERS];      /* widths[k + 1] rounded up to CHUNK */
    float *weights[DESCENT_MLP_MAX_LAYERS];  /* layer k transposed: widths[k] rows, padded */
    float *biases[DESCENT_MLP_MAX_LAYERS];   /* stride[k] floats, padded with zeros */
    float *plane_sums;                       /* planes rows of stride[0] floats */
    const float **rows1, **rows;             /* a layer's inputs as lists (see above) */
    float *vals, *h;
    int *full;                               /* the all-ones planes found in x */
} descent_mlp;

/* Hidden layers and head from layer 0's lists (n1 rows of inputs that are 1, n rows with
 * their values); ReLU between layers. */
static float descent_mlp_layers(const descent_mlp *m, int n1, int n)
{
    const float **rows1 = m->rows1, **rows = m->rows;
    float *vals = m->vals, *h = m->h, v;
    int j, k, i, n_out;

    for (k = 0;; k++) {
        n_out = m->widths[k + 1];
        for (j = 0; j < n_out; j += DESCENT_MLP_CHUNK)
            descent_mlp_chunk(m->biases[k] + j, rows1, n1, rows, vals, n, j, h + j);
        if (k + 1 == m->n_layers)
            return h[0];
        /* the next layer's list: the units ReLU left positive */
        n1 = n = 0;
        for (i = 0; i < n_out; i++) {
            v = h[i];
            rows[n] = m->weights[k + 1] + (long)i * m->stride[k + 1];
            vals[n] = v;
            n += v > 0.0f;
        }
    }
}

/* Appends input e (value v) to the list it belongs to, without a branch. */
#define DESCENT_MLP_APPEND(e, v)                                                        \
    do {                                                                                \
        row = w + (long)(e) * stride0;                                                  \
        rows1[n1] = row;                                                                \
        n1 += (v) == 1.0f;                                                              \
        rows[n] = row;                                                                  \
        vals[n] = (v);                                                                  \
        n += ((v) != 0.0f) & ((v) != 1.0f);                                             \
    } while (0)

/* The network's output (before any activation) for a dense input x: planes * cells
 * floats, then zeros up to a multiple of 8. x is scratch: the all-ones planes are cleared. */
static float descent_mlp_dense(const descent_mlp *m, float *x)
{
    const float *w = m->weights[0], *row;
    const float **rows1 = m->rows1, **rows = m->rows;
    float *vals = m->vals, v0, v1;
    int stride0 = m->stride[0], cells = m->cells;
    int n_in = (m->planes * cells + 7) & ~7;
    int n1 = 0, n = 0, n_full = 0, p, c, e, i, t;
    uint64_t b0, b1, b2, b3;

    /* an all-ones plane (side to move, the die) costs one precomputed row, added after
     * the set inputs; its cells are cleared so that the scan below skips them */
    for (p = 0; p < m->planes; p++) {
        for (c = 0; c < cells && x[p * cells + c] == 1.0f; c++)
            ;
        if (c == cells) {
            m->full[n_full++] = p;
            memset(x + p * cells, 0, cells * sizeof(float));
        }
    }
    /* the set inputs, by index: most of x is 0, so eight inputs (then two) at a time are
     * skipped when all their bits are 0 */
    for (i = 0; i < n_in; i += 8) {
        /* one 64-bit word holds two inputs; words read into registers, not an array */
        memcpy(&b0, x + i, 8);
        memcpy(&b1, x + i + 2, 8);
        memcpy(&b2, x + i + 4, 8);
        memcpy(&b3, x + i + 6, 8);
        if ((b0 | b1 | b2 | b3) == 0)
            continue;
        for (t = 0; t < 8; t += 2) {
            if ((t == 0 ? b0 : t == 2 ? b1 : t == 4 ? b2 : b3) == 0)
                continue;
            e = i + t;
            v0 = x[e];
            v1 = x[e + 1];
            DESCENT_MLP_APPEND(e, v0);
            DESCENT_MLP_APPEND(e + 1, v1);
        }
    }
    for (p = 0; p < n_full; p++)
        rows1[n1++] = m->plane_sums + (long)m->full[p] * stride0;
    return descent_mlp_layers(m, n1, n);
}

/* The same output from the encoding as a list (GameState.c_features): f[0..nf) holds the
 * index of each input that is 1 and planes * cells + p for each all-ones plane p, every
 * other input being 0. f is scratch: it is sorted, so that the rows are summed in the
 * dense path's order and both paths give the same bits. */
static float descent_mlp_sparse(const descent_mlp *m, int *f, int nf)
{
    const float *w = m->weights[0];
    int n_in = m->planes * m->cells, stride0 = m->stride[0], i, j, v;

    for (i = 1; i < nf; i++) {              /* a few dozen entries, mostly in order */
        v = f[i];
        for (j = i; j > 0 && f[j - 1] > v; j--)
            f[j] = f[j - 1];
        f[j] = v;
    }
    for (i = 0; i < nf; i++)
        m->rows1[i] = f[i] < n_in ? w + (long)f[i] * stride0
                                  : m->plane_sums + (long)(f[i] - n_in) * stride0;
    return descent_mlp_layers(m, nf, 0);
}

#endif
