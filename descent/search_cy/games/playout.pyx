# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Random playouts over any kernel, in C: the rules benchmark and the kernel self-check.

The random number generator lives here, not in the kernels (which never draw random
numbers): player moves are uniform over legal actions, chance outcomes are sampled by
their probabilities.
"""
from libc.stdint cimport uint64_t
from libc.stdlib cimport malloc, free

from descent.search_cy.games.state cimport GameState, CHANCE, TERMINAL
from descent.search_cy.games.zobrist cimport splitmix64


cdef inline double _uniform(uint64_t* rng) noexcept nogil:
    return (splitmix64(rng) >> 11) * (1.0 / 9007199254740992.0)


cdef int _pick(GameState s, int* acts, double* probs, uint64_t* rng) noexcept nogil:
    """One random action at a non-terminal node (-1 when a player node has no action)."""
    cdef int n, i
    cdef double u, acc
    if s.c_player() == CHANCE:
        n = s.c_chance(acts, probs)
        u = _uniform(rng)
        acc = 0.0
        for i in range(n - 1):
            acc += probs[i]
            if u < acc:
                return acts[i]
        return acts[n - 1]
    n = s.c_legal(acts)
    if n == 0:
        return -1
    return acts[<int>(splitmix64(rng) % <uint64_t>n)]


def random_playouts(GameState state, int games, uint64_t seed, int max_steps=100000) -> int:
    """Play `games` random games from `state` and undo back to it; returns states visited.

    Blocks (runs without the GIL). The state is restored exactly when it returns.
    """
    cdef int cap = state.max_actions if state.max_actions > state.max_chance_outcomes \
        else state.max_chance_outcomes
    cdef int* acts = <int*>malloc(cap * sizeof(int))
    cdef double* probs = <double*>malloc(cap * sizeof(double))
    cdef uint64_t rng = seed
    cdef long long visited = 0
    cdef int g, depth, a
    if not acts or not probs:
        free(acts)
        free(probs)
        raise MemoryError()
    with nogil:
        for g in range(games):
            depth = 0
            while not state.c_terminal() and depth < max_steps:
                a = _pick(state, acts, probs, &rng)
                if a < 0:
                    break
                state.c_apply(a)
                depth += 1
                visited += 1
            while depth > 0:
                state.c_undo()
                depth -= 1
    free(acts)
    free(probs)
    return visited


def self_check(GameState state, int games, uint64_t seed, int max_steps=100000) -> dict:
    """Random games with the kernel's invariants checked at every node, in C.

    At every node: the incremental hash equals a from-scratch recompute; chance
    probabilities are positive and sum to 1; a player node that is not terminal has a
    legal action; apply then undo of every legal action (or outcome) restores the hash.
    At the end of each game every undo restores the hash seen on the way down.
    Returns counts of nodes checked and of each kind of violation.
    """
    cdef int cap = state.max_actions if state.max_actions > state.max_chance_outcomes \
        else state.max_chance_outcomes
    cdef int* acts = <int*>malloc(cap * sizeof(int))
    cdef double* probs = <double*>malloc(cap * sizeof(double))
    cdef uint64_t* path = <uint64_t*>malloc((max_steps + 1) * sizeof(uint64_t))
    cdef uint64_t rng = seed
    cdef long long nodes = 0, bad_hash = 0, bad_probs = 0, bad_roundtrip = 0
    cdef long long bad_undo = 0, stuck = 0, bad_count = 0
    cdef int g, depth, a, n, i, p
    cdef double total
    cdef uint64_t h
    if not acts or not probs or not path:
        free(acts)
        free(probs)
        free(path)
        raise MemoryError()
    with nogil:
        for g in range(games):
            depth = 0
            while depth < max_steps:
                nodes += 1
                h = state.c_hash()
                path[depth] = h
                if h != state.c_full_hash():
                    bad_hash += 1
                if state.c_terminal():
                    break
                p = state.c_player()
                if p == CHANCE:
                    n = state.c_chance(acts, probs)
                    total = 0.0
                    for i in range(n):
                        if probs[i] <= 0.0:
                            bad_probs += 1
                        total += probs[i]
                    if n <= 0 or total < 1.0 - 1e-9 or total > 1.0 + 1e-9:
                        bad_probs += 1
                else:
                    n = state.c_legal(acts)
                    if n > state.max_actions:
                        bad_count += 1
                if n <= 0:
                    stuck += 1
                    break
                for i in range(n):
                    state.c_apply(acts[i])
                    state.c_undo()
                    if state.c_hash() != h:
                        bad_roundtrip += 1
                a = _pick(state, acts, probs, &rng)
                state.c_apply(a)
                depth += 1
            while depth > 0:
                state.c_undo()
                depth -= 1
                if state.c_hash() != path[depth]:
                    bad_undo += 1
    free(acts)
    free(probs)
    free(path)
    return {"nodes": nodes, "bad_hash": bad_hash, "bad_probs": bad_probs,
            "bad_roundtrip": bad_roundtrip, "bad_undo": bad_undo, "stuck": stuck,
            "too_many_actions": bad_count}
