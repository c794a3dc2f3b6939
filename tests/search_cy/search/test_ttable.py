"""The bounded transposition table: memory budget, store/probe, replacement and aging."""

from __future__ import annotations

import random

import pytest

from descent.search_cy.eval.evaluator import ZeroEvaluator
from descent.search_cy.search.api import SearchParams
from descent.search_cy.search.expectimax import Expectiminimax
from descent.search_cy.search.ttable import (
    BUCKET_BYTES,
    ENTRY_BYTES,
    EXACT,
    LOWER,
    UPPER,
    TranspositionTable,
)

MIB = 1 << 20


@pytest.mark.parametrize("mb", [1, 2, 3, 5, 64])
def test_allocation_stays_within_the_budget(mb: int) -> None:
    table = TranspositionTable(mb)
    assert table.bytes <= mb * MIB
    assert table.bytes > mb * MIB // 2            # power-of-two buckets: at least half used
    assert table.n_buckets & (table.n_buckets - 1) == 0
    assert table.bytes == table.n_buckets * BUCKET_BYTES
    assert table.capacity == 2 * table.n_buckets
    assert BUCKET_BYTES == 2 * ENTRY_BYTES
    assert len(table) == 0 and table.stored == 0


def test_the_search_allocates_its_table_within_hash_mb() -> None:
    search = Expectiminimax(ZeroEvaluator(), SearchParams(hash_mb=1))
    assert search.tt.hash_mb == 1
    assert search.tt.bytes <= MIB


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        TranspositionTable(0)
    table = TranspositionTable(1)
    with pytest.raises(ValueError):
        table.store(1, 0.0, 1, 99)
    with pytest.raises(ValueError):
        table.store(1, 0.0, -1, EXACT)


def test_store_and_probe_round_trip() -> None:
    table = TranspositionTable(1)
    assert table.probe(12345) is None
    table.store(12345, 0.25, 3, LOWER, 17, resolved=True)
    table.store(2**64 - 1, -0.5, 0, UPPER)
    assert table.probe(12345) == {"value": 0.25, "depth": 3, "bound": LOWER, "move": 17,
                                  "resolved": True, "age": 0}
    entry = table.probe(2**64 - 1)
    assert entry is not None
    assert entry["value"] == -0.5 and entry["bound"] == UPPER and entry["move"] == -1
    assert table.stored == 2
    assert table.probes == 3 and table.hits == 2
    # values are stored as doubles: bit for bit
    table.store(99, 1.0 / 3.0, 1, EXACT)
    entry = table.probe(99)
    assert entry is not None and entry["value"] == 1.0 / 3.0


def test_same_key_keeps_the_deeper_result_and_the_exact_one() -> None:
    table = TranspositionTable(1)
    table.store(7, 0.5, 5, EXACT, 3)
    table.store(7, 0.1, 2, EXACT, 4)          # shallower, same search: ignored
    entry = table.probe(7)
    assert entry is not None and (entry["depth"], entry["value"], entry["move"]) == (5, 0.5, 3)
    table.store(7, 0.6, 5, LOWER, 8)          # a bound at the same depth: the exact stays
    entry = table.probe(7)
    assert entry is not None and entry["bound"] == EXACT and entry["value"] == 0.5
    table.store(7, 0.7, 6, UPPER)             # deeper: replaces, keeps the known move
    entry = table.probe(7)
    assert entry is not None
    assert (entry["depth"], entry["bound"], entry["move"]) == (6, UPPER, 3)
    assert table.stored == 1


def colliding_keys(table: TranspositionTable, count: int) -> list[int]:
    """Distinct keys that all land in bucket 0."""
    keys = [j << 44 for j in range(1, count + 1)]
    assert all(table.bucket_of(k) == 0 for k in keys)
    return keys


def test_depth_preferred_slot_keeps_the_deep_entry() -> None:
    table = TranspositionTable(1)
    deep, *shallow = colliding_keys(table, 50)
    table.store(deep, 0.9, 10, EXACT, 1)
    for k, key in enumerate(shallow):
        table.store(key, 0.0, 1 + k % 3, EXACT, 2)
        entry = table.probe(deep)
        assert entry is not None and entry["depth"] == 10
        assert table.probe(key) is not None            # the newest is always there
    assert table.stored == 2                           # one bucket, two slots
    assert sum(table.probe(key) is not None for key in shallow) == 1


def test_a_deeper_new_entry_takes_the_deep_slot() -> None:
    table = TranspositionTable(1)
    a, b, c = colliding_keys(table, 3)
    table.store(a, 0.1, 3, EXACT)
    table.store(b, 0.2, 5, EXACT)     # deeper: a moves to the always-replace slot
    assert table.probe(a) is not None and table.probe(b) is not None
    table.store(c, 0.3, 1, EXACT)     # shallow: replaces a, b stays
    assert table.probe(a) is None
    assert table.probe(b) is not None and table.probe(c) is not None
    assert table.replaced == 1


def test_entries_of_an_older_search_are_replaced_first() -> None:
    table = TranspositionTable(1)
    deep, other, fresh = colliding_keys(table, 3)
    table.store(deep, 0.9, 10, EXACT)
    table.store(other, 0.1, 2, EXACT)
    table.new_generation()
    table.store(fresh, 0.5, 1, EXACT)  # the old deep entry is stale: it gives way
    entry = table.probe(fresh)
    assert entry is not None and entry["age"] == 1
    assert table.probe(deep) is not None or table.probe(other) is not None
    table.store(deep, 0.2, 3, EXACT)   # a stale entry of the same key is overwritten
    entry = table.probe(deep)
    assert entry is not None and entry["depth"] == 3 and entry["age"] == 1


def test_filling_far_beyond_capacity_keeps_working() -> None:
    table = TranspositionTable(1)
    rng = random.Random(5)
    keys = [rng.getrandbits(64) for _ in range(4 * table.capacity)]
    for i, key in enumerate(keys):
        table.store(key, float(i), rng.randint(0, 20), EXACT, i & 0xFFFF)
        if i % 997 == 0:
            entry = table.probe(key)
            assert entry is not None and entry["value"] == float(i)
    assert table.stored <= table.capacity
    assert table.stored >= 0.95 * table.capacity
    assert table.replaced >= len(keys) - table.capacity
    assert table.bytes <= MIB
    # what survives is the deep part of the stream: the mean depth rose above 10
    depths = [e["depth"] for e in map(table.probe, keys) if e is not None]
    assert len(depths) == table.stored
    assert sum(depths) / len(depths) > 11.0


def test_clear_forgets_everything() -> None:
    table = TranspositionTable(1)
    for key in range(1, 1000):
        table.store(key * 0x9E3779B97F4A7C15 % 2**64, 0.0, 1, EXACT)
    assert table.stored > 0
    table.clear()
    assert table.stored == 0 and table.probes == 0 and table.generation == 0
    assert table.probe(0x9E3779B97F4A7C15) is None
    stats = table.stats()
    assert stats["bytes"] == table.bytes and stats["capacity"] == table.capacity
