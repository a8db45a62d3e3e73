"""Cloud GPU Workbench: rent GPU machines, watch them train, stop the bill with one click."""

__version__ = "0.1.0"

import logging as _logging

# Library-style default: no "No handlers" fallback to stderr; the app and CLI attach real handlers.
_logging.getLogger("workbench").addHandler(_logging.NullHandler())
