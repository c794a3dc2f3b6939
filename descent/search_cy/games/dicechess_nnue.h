/* The feature transformer of a dice-chess NNUE, kept by the position itself.
 *
 * An NNUE value network (Stockfish's design) starts with one wide layer over sparse
 * features, here 768 piece-square inputs seen from each side: a piece of colour c and type
 * t (1 pawn .. 6 king) on square sq is, from White's view, feature (c * 6 + t - 1) * 64 +
 * sq, and from Black's the same with the colours exchanged and the board flipped (rank r
 * read as 7 - r), exactly the piece inputs of GameState.c_features(sym) for sym 0 and 1.
 * A move changes two to four pieces, so the layer's sums (the accumulator, one row of
 * `width` per view) are kept up to date by adding and subtracting weight rows in the
 * board's _put/_take, instead of being summed afresh at every leaf.
 *
 * The weights are integers (the model file's float weights times DC_NNUE_Q, which the
 * loader checks are whole numbers in int16's range), and the accumulator is int32: an add
 * then a subtract gives back exactly the sums before, so the incremental accumulator
 * equals a fresh one after any sequence of moves and take-backs.
 *
 * A network is shared, read-only, by the evaluator that loaded it and every position that
 * holds an accumulator of it; it is reference counted (atomically: search threads attach
 * their own positions) and freed with its last holder.
 */
#ifndef DESCENT_DICECHESS_NNUE_H
#define DESCENT_DICECHESS_NNUE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DC_NNUE_FEATURES 768        /* 2 colours x 6 types x 64 squares */
#define DC_NNUE_MAX_WIDTH 256       /* the widest accumulator a position holds */
#define DC_NNUE_Q 1024              /* weight = integer / Q (a power of two: exact) */

typedef struct {
    int refs;
    int width;                      /* accumulator width, a multiple of 16, <= MAX */
    int16_t *ft;                    /* FEATURES rows of `width` */
    int16_t *bias;                  /* `width` */
} dc_nnue;

static inline void dc_nnue_retain(dc_nnue *n)
{
    if (n)
        __atomic_add_fetch(&n->refs, 1, __ATOMIC_RELAXED);
}

static inline void dc_nnue_release(dc_nnue *n)
{
    if (n && __atomic_sub_fetch(&n->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        free(n->ft);
        free(n->bias);
        free(n);
    }
}

/* The feature of piece code pc (colour * 8 + type) on sq from view `persp` (0 White). */
static inline int dc_nnue_feature(int pc, int sq, int persp)
{
    return ((((pc >> 3) ^ persp) * 6 + (pc & 7) - 1) << 6) + (sq ^ (persp * 56));
}

/* acc[0..width) is White's view, acc[MAX..MAX + width) Black's. */
static inline void dc_nnue_piece(const dc_nnue *n, int32_t *acc, int pc, int sq, int sign)
{
    const int16_t *w0 = n->ft + (long)dc_nnue_feature(pc, sq, 0) * n->width;
    const int16_t *w1 = n->ft + (long)dc_nnue_feature(pc, sq, 1) * n->width;
    int32_t *a1 = acc + DC_NNUE_MAX_WIDTH;
    int j, width = n->width;

    if (sign > 0) {
        for (j = 0; j < width; j++) {
            acc[j] += w0[j];
            a1[j] += w1[j];
        }
    } else {
        for (j = 0; j < width; j++) {
            acc[j] -= w0[j];
            a1[j] -= w1[j];
        }
    }
}

/* Both views summed afresh from the mailbox board[64] (piece codes, 0 empty). */
static inline void dc_nnue_refresh(const dc_nnue *n, int32_t *acc, const int8_t *board)
{
    int j, sq;

    for (j = 0; j < n->width; j++)
        acc[j] = acc[DC_NNUE_MAX_WIDTH + j] = n->bias[j];
    for (sq = 0; sq < 64; sq++)
        if (board[sq])
            dc_nnue_piece(n, acc, board[sq], sq, 1);
}

#endif
