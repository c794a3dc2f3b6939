"""Heuristic evaluators in C, one per game, registered by game name."""
