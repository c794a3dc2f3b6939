"""Type stubs of hex_prior.pyx (C functions only: nothing for Python)."""
