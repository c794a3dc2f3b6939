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

/* The n * n feature indices of ``view`` into ``idx`` (one a cell, in view order). */
static void hx_nnue_indices(const int8_t *cells, int n, int view, int32_t *idx)
{
    int r, c, k, s, pattern, line;
    for (r = 0; r < n; r++)
        for (c = 0; c < n; c++) {
            s = hx_nnue_state(cells, n, view, r, c);
            if (s == 1) {
                idx[r * n + c] = r * n + c;
            } else if (s == 2) {
                idx[r * n + c] = n * n + r * n + c;
            } else {
                pattern = 0;
                for (k = 5; k >= 0; k--)
                    pattern = pattern * 3
                        + hx_nnue_state(cells, n, view, r + hx_nnue_dr[k], c + hx_nnue_dc[k]);
                line = hx_nnue_min(hx_nnue_min(r, n - 1 - r), HX_NNUE_LINE_CAP) * 6
                    + hx_nnue_min(hx_nnue_min(c, n - 1 - c), HX_NNUE_LINE_CAP);
                idx[r * n + c] = 2 * n * n + line * HX_NNUE_PATTERNS + pattern;
            }
        }
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
