"""Research tools: the experiments behind the engine's shipped knowledge and its results
pages (pattern and route gammas, the swap map, distillation, fits of outcomes and
playouts, regret against exact play, clock studies, the dice-chess study's agent). They
sit above the user tools they drive (the arena, the referee) and are not needed to play."""
