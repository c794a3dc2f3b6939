"""Type stubs of dicechess_attacks.pyx: C-level attack tables only (no Python API)."""
