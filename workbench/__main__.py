"""`python -m workbench` → the CLI (the desktop app when no command is given)."""

import sys

from workbench.cli import main

sys.exit(main())
