"""Cloud GPU Workbench: rent GPU machines, watch them train, stop the bill with one click."""

__version__ = "0.1.0"
