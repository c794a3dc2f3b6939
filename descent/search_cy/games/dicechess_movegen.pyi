"""Type stubs of dicechess_movegen.pyx: C-level move generation only (no Python API)."""
