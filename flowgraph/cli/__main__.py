"""`python -m flowgraph.cli`: the same as the `flowgraph` script."""

import sys

from flowgraph.cli import main

sys.exit(main())
