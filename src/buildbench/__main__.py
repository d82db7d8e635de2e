"""``python -m buildbench`` runs the CLI."""

import sys

from buildbench.cli import main

sys.exit(main())
