"""descent: a competition game engine for Hex, EinStein wurfelt nicht! and dice chess.

Layers, top to bottom, each importing only those below it (docs/layout.md; checked by
import-linter in CI):

    descent.tools       the command line (``python -m descent``), arena, benchmarks
    descent.protocols   GTP, the EinStein dialects and UCI, over stdio or MQTT
    descent.engine      the Engine facade, its option table, time manager, logging
    descent.nets        value networks: models, encodings, backends, learning
    descent.search_cy   Cython game kernels, searches and C evaluators
"""

__version__ = "0.1.0"
