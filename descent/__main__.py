"""``python -m descent``: the same command line as the ``descent`` script."""

import sys

from descent.tools.cli import main

sys.exit(main())
