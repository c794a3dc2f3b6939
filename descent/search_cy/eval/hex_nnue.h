/* The Hex NNUE's features (hex_nnue_eval.pyx; nets/models.py's HexNNUENet is the same
 * function in torch).
 *
 * A view is the board as one player sees it, in the frame where that player connects the
 * top and bottom edges: Black's view is the board as it is, White's the transpose with the
 * colours exchanged (the policy networks' canonical frame). In a view each cell (r, c)
 * sets exactly one feature:
 *   r * n + c                          the viewer's stone,
 *   n * n + r * n + c                  the opponent's stone,
 *   2 * n * n + line * 729 + pattern   an empty cell: the states of its six neighbours
 *                                      (0 empty, 1 the viewer's, 2 the opponent's; in the
 *                                      order (-1,0) (-1,1) (0,-1) (0,1) (1,-1) (1,0), the
 *                                      first the lowest base-3 digit) where the viewer's
 *                                      edges count as its stones, the opponent's as its,
 *                                      and the two corners outside both edges as empty;
 *                                      ``line`` = min(r, n-1-r, 5) * 6 + min(c, n-1-c, 5),
 *                                      how far the cell is from each pair of edges.
 * So an empty cell's weights are shared by the cells at the same distances from the
 * edges, which keeps the table small (26,244 rows of patterns at any size); stones keep
 * a row a cell.
 */
#ifndef DESCENT_HEX_NNUE_H
#define DESCENT_HEX_NNUE_H

#include <stdint.h>

#define HX_NNUE_PATTERNS 729        /* 3^6 neighbourhoods */
#define HX_NNUE_LINE_CAP 5          /* distances to an edge from 0 to 5 (5: or more) */
#define HX_NNUE_LINES 36
#define HX_NNUE_Q 1024              /* ft weights are whole multiples of 1 / Q */
#define HX_NNUE_MAX_WIDTH 256

static const int hx_nnue_dr[6] = {-1, -1, 0, 0, 1, 1};
static const int hx_nnue_dc[6] = {0, 1, -1, 1, -1, 0};

/* Features of a view at board size n. */
static inline int hx_nnue_features(int n)
{
    return 2 * n * n + HX_NNUE_LINES * HX_NNUE_PATTERNS;
}

static inline int hx_nnue_min(int a, int b) { return a < b ? a : b; }

/* The state of view cell (r, c) for ``view`` (0 Black, 1 White): 0 empty, 1 the
 * viewer's stone or edge, 2 the opponent's. ``cells`` is the board (r * n + c; 0 empty,
 * 1 Black, 2 White). */
static inline int hx_nnue_state(const int8_t *cells, int n, int view, int r, int c)
{
    int8_t s;
    if (r < 0 || r >= n)
        return (c >= 0 && c < n) ? 1 : 0;
    if (c < 0 || c >= n)
        return 2;
    s = view ? cells[c * n + r] : cells[r * n + c];
    return s == 0 ? 0 : (s == view + 1 ? 1 : 2);
}

/* The feature view cell (r, c) of ``view`` sets. */
static inline int32_t hx_nnue_feature(const int8_t *cells, int n, int view, int r, int c)
{
    int k, pattern = 0, line, s = hx_nnue_state(cells, n, view, r, c);
    if (s == 1)
        return r * n + c;
    if (s == 2)
        return n * n + r * n + c;
    for (k = 5; k >= 0; k--)
        pattern = pattern * 3
            + hx_nnue_state(cells, n, view, r + hx_nnue_dr[k], c + hx_nnue_dc[k]);
    line = hx_nnue_min(hx_nnue_min(r, n - 1 - r), HX_NNUE_LINE_CAP) * 6
        + hx_nnue_min(hx_nnue_min(c, n - 1 - c), HX_NNUE_LINE_CAP);
    return 2 * n * n + line * HX_NNUE_PATTERNS + pattern;
}

/* The n * n feature indices of ``view`` into ``idx`` (one a cell, in view order). */
static void hx_nnue_indices(const int8_t *cells, int n, int view, int32_t *idx)
{
    int r, c;
    for (r = 0; r < n; r++)
        for (c = 0; c < n; c++)
            idx[r * n + c] = hx_nnue_feature(cells, n, view, r, c);
}

/* acc += sign * the row of feature ``f``. */
static inline void hx_nnue_row(const int16_t *ft, int width, int32_t f, int sign,
                               int32_t *acc)
{
    int j;
    const int16_t *row = ft + (long)f * width;
    if (sign > 0)
        for (j = 0; j < width; j++)
            acc[j] += row[j];
    else
        for (j = 0; j < width; j++)
            acc[j] -= row[j];
}

/* Moves both views' sums ``acc`` (Black's at 0, White's at ``stride``) of board ``was``
 * to those of board ``now``, which differs from it at the ``count`` cells ``changed``
 * (board indices): only the features of those cells and of their neighbours can change.
 * ``stamp`` (n * n ints, zero on entry and on return) marks the cells already redone. */
static void hx_nnue_update(const int16_t *ft, int width, const int8_t *was,
                           const int8_t *now, int n, const int32_t *changed, int count,
                           int32_t *acc, int stride, int32_t *stamp)
{
    int i, k, r, c, rr, cc, cell, view, m = 0;
    int32_t before, after;
    int32_t touched[7 * 16];       /* at most 16 changed cells (hx_nnue_delta_limit) */
    for (i = 0; i < count; i++) {
        r = changed[i] / n;
        c = changed[i] - r * n;
        for (k = -1; k < 6; k++) {
            rr = k < 0 ? r : r + hx_nnue_dr[k];
            cc = k < 0 ? c : c + hx_nnue_dc[k];
            if (rr < 0 || rr >= n || cc < 0 || cc >= n || stamp[rr * n + cc])
                continue;
            stamp[rr * n + cc] = 1;
            touched[m++] = rr * n + cc;
        }
    }
    for (i = 0; i < m; i++) {
        cell = touched[i];
        stamp[cell] = 0;
        r = cell / n;
        c = cell - r * n;
        for (view = 0; view < 2; view++) {
            /* White's view sees board cell (r, c) at (c, r): the neighbourhood is the
             * same set of cells, transposition maps it onto itself */
            rr = view ? c : r;
            cc = view ? r : c;
            before = hx_nnue_feature(was, n, view, rr, cc);
            after = hx_nnue_feature(now, n, view, rr, cc);
            if (before != after) {
                hx_nnue_row(ft, width, before, -1, acc + view * stride);
                hx_nnue_row(ft, width, after, 1, acc + view * stride);
            }
        }
    }
}

/* The most changed cells an update takes instead of summing afresh: about half the
 * rows of a fresh sum (each changed cell redoes up to seven cells). */
static inline int hx_nnue_delta_limit(int n)
{
    int limit = n * n / 14;
    return limit < 16 ? limit : 16;
}

/* acc = bias + the rows (``width`` int16 each, feature-major) of the n * n features. */
static void hx_nnue_sum(const int16_t *ft, const int16_t *bias, int width,
                        const int32_t *idx, int count, int32_t *acc)
{
    int i, j;
    const int16_t *row;
    for (j = 0; j < width; j++)
        acc[j] = bias[j];
    for (i = 0; i < count; i++) {
        row = ft + (long)idx[i] * width;
        for (j = 0; j < width; j++)
            acc[j] += row[j];
    }
}

#endif
