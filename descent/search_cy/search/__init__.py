"""Searches over the kernel interface: best-first (UBFM, UBFM_s, descent), expectiminimax,
MCTS, the Rminimax strength layer, action selection, and their shared parts (evaluators,
stopper, transposition tables)."""
