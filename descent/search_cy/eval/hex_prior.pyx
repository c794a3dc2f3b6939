# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The Hex move prior and knowledge as the ``rave`` search uses them, over a node's
children (``Child`` records): what each move is worth searching before any simulation.

The pattern prior (``games/hex_patterns.pyx``, MoHex 2.0's prior knowledge): when a node
is expanded each child gets the probability its local pattern gives it; children whose
prior is under ``prune_ratio`` of the best are skipped (``SKIPPED_BY_PRIOR``) until every
other child is proven lost. The swap gets the largest gamma: it is always a serious
candidate.

The prior's route factor: patterns see twelve cells, not where the game is going. Each
child's prior is multiplied by the route gamma of its cell (how far the shortest
two-distance route of each player through it is from that player's shortest, the
evaluator's route codes), renormalised, and the prior pruning redone over the children
not yet visited.

The learned move prior (``eval/hex_policy.pyx``, MoHex-CNN's): at a node of enough visits
each child's prior is multiplied by the policy network's probability of its move (to a
power, ``policy_weight``), renormalised the same way (the network and the patterns are two experts whose product is
sharper than either); the network may bring back a child the pruning skipped, never skip
one more.

Inferior cells (``games/hex_inferior.pyx``, MoHex's inferior-cell analysis from each
cell's ring of neighbours): at expansion, dead cells, captured cells (with their fill-in
colour) and the mover's vulnerable cells get no child worth searching (``INFERIOR``).

A mustplay (the evaluator's or H-search's, ``games/hex_vc.pyx``): the children outside
it are lost (``LOST_BY_KNOWLEDGE``). VC maintenance (MoHex's VCM): below a child that
probes a full connection of the opponent, the opponent's answers that make it whole
again gain a bonus of prior, the priors renormalised.

What calls the evaluators and H-search, and when, is the search's (``search/rave.pyx``).
"""
from libc.stdint cimport int8_t, int16_t

from descent.search_cy.games.hex_patterns cimport HexPatterns
from descent.search_cy.games.hex_inferior cimport HexInferior, INF_KEEP, INF_VULNERABLE


cdef inline bint _routed(Child c, int ncells) noexcept nogil:
    """Whether the route factor weighs child c: a cell neither inferior nor proven lost
    (the swap keeps its own prior)."""
    return c.move < ncells and c.pruned != INFERIOR and c.pruned != LOST_BY_KNOWLEDGE


cdef void expansion_prior(Child* ch, int k, const int8_t* board, int side, int last,
                          bint swap, HexPatterns pat, HexInferior inferior, int8_t* labels,
                          double prune_ratio, int ncells) noexcept nogil:
    """The prior of ``k`` new children of ``board`` (``side`` to move, ``last`` its last
    stone; with ``swap`` the last child is the swap): the inferior cells among them left
    out (where some cell is kept), the patterns' gammas normalised over the children
    searched (the swap gets the largest), or uniform without patterns."""
    cdef int i, searched = k
    cdef double g, gsum = 0.0
    if inferior is not None and k > 1:
        if inferior.c_analyse(board, side + 1, labels) > 0:
            for i in range(k):
                if ch[i].move < ncells and labels[ch[i].move] != INF_KEEP:
                    ch[i].pruned = INFERIOR
                    ch[i].prior = 0.0
                    searched -= 1
                    if labels[ch[i].move] != INF_VULNERABLE:
                        # dead or captured: what the playouts may start from
                        ch[i].fill = inferior.work[ch[i].move]
    if pat is not None and k > 0:
        for i in range(k):
            if ch[i].move < ncells and ch[i].pruned != INFERIOR:
                g = pat.c_gamma(board, ch[i].move, side, last)
                ch[i].prior = <float>g
                gsum += g
        if swap:
            g = 1.0
            for i in range(k - 1):
                if ch[i].prior > g:
                    g = ch[i].prior
            ch[k - 1].prior = <float>g
            gsum += g
        for i in range(k):
            ch[i].prior = <float>(ch[i].prior / gsum)
        prune_by_prior(ch, k, prune_ratio, ncells)
    else:
        for i in range(k):
            if ch[i].pruned != INFERIOR:
                ch[i].prior = <float>(1.0 / searched)


cdef void prune_by_prior(Child* ch, int count, double prune_ratio, int ncells) noexcept nogil:
    """The prior pruning over ``count`` children: a child never visited whose prior
    falls under ``prune_ratio`` of the best is skipped, a skipped one that rises above
    it comes back (inferior children and proven losses are left alone)."""
    _prune(ch, count, prune_ratio, ncells, True)


cdef void _prune(Child* ch, int count, double prune_ratio, int ncells,
                 bint skip) noexcept nogil:
    """``prune_by_prior``; with ``skip`` False it only brings skipped children back."""
    cdef int i
    cdef double best = 0.0
    if prune_ratio <= 0.0:
        return
    for i in range(count):
        if (ch[i].pruned == 0 or ch[i].pruned == SKIPPED_BY_PRIOR) and ch[i].prior > best:
            best = ch[i].prior
    for i in range(count):
        if ch[i].move >= ncells:
            continue
        if ch[i].pruned == SKIPPED_BY_PRIOR and ch[i].prior >= prune_ratio * best:
            ch[i].pruned = 0
        elif (skip and ch[i].pruned == 0 and ch[i].n == 0 and ch[i].node < 0
                and ch[i].prior < prune_ratio * best):
            ch[i].pruned = SKIPPED_BY_PRIOR


cdef void scale_prior(Child* ch, int count, const double* factor, double prune_ratio,
                      int ncells, bint skip) noexcept nogil:
    """Each weighed child's prior (``_routed``) times ``factor`` of its cell, then
    renormalised so that the weighed children keep their share (the swap keeps its own),
    and the prior pruning redone; with ``skip`` False it only brings children back.

    The route factor passes its cells' route gammas (and may skip). The policy network
    passes (p + 1e-4) ** weight (1: the product of the two experts, 0.5 a softer network;
    the floor, lest a cell the network rules out lose every chance of a search) and never
    skips a child the patterns kept: its product is far sharper than the patterns the 2%
    ratio was set for (at a root of a hundred moves it would leave a handful)."""
    cdef int i
    cdef double before = 0.0, after = 0.0, scale
    for i in range(count):
        if not _routed(ch[i], ncells):
            continue
        before += ch[i].prior
        ch[i].prior = <float>(ch[i].prior * factor[ch[i].move])
        after += ch[i].prior
    if after <= 0.0:
        return
    scale = before / after
    for i in range(count):
        if not _routed(ch[i], ncells):
            continue
        ch[i].prior = <float>(ch[i].prior * scale)
    _prune(ch, count, prune_ratio, ncells, skip)


cdef void mustplay(Child* ch, int count, const int8_t* keep, bint keep_inferior) noexcept nogil:
    """The children outside ``keep`` pruned as losses (the inferior ones left as they are
    where ``keep_inferior``); a skipped child inside it comes back."""
    cdef int i
    for i in range(count):
        if keep_inferior and ch[i].pruned == INFERIOR:
            continue
        if not keep[ch[i].move]:
            ch[i].pruned = LOST_BY_KNOWLEDGE
        elif ch[i].pruned == SKIPPED_BY_PRIOR:
            ch[i].pruned = 0      # a move that must be considered


cdef bint probes(const int16_t* vcm, int npairs, int m) noexcept nogil:
    """Whether the move ``m`` probes a connection among the ``npairs`` (probe, answer,
    x, y) pairs of ``vcm``."""
    cdef int k
    for k in range(npairs):
        if vcm[4 * k] == m:
            return True
    return False


cdef void vcm_boost(Child* kids, int count, const int16_t* vcm, int npairs, int m,
                    double bonus) noexcept nogil:
    """Below the probe ``m``: its ``count`` children that answer it (the pairs of
    ``vcm``) get ``bonus`` more prior and come back if the prior had skipped them; the
    priors renormalised where some did."""
    cdef int t, k, boosted = 0
    for t in range(count):
        if kids[t].pruned == LOST_BY_KNOWLEDGE or kids[t].pruned == INFERIOR:
            continue
        for k in range(npairs):
            if vcm[4 * k] == m and vcm[4 * k + 1] == kids[t].move:
                kids[t].prior += <float>bonus
                if kids[t].pruned == SKIPPED_BY_PRIOR:
                    kids[t].pruned = 0
                boosted += 1
                break
    if boosted:
        for t in range(count):
            kids[t].prior = <float>(kids[t].prior / (1.0 + bonus * boosted))
