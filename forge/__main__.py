"""`python -m forge` runs the CLI."""

import sys

from forge.cli import main

sys.exit(main())
