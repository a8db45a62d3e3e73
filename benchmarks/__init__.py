"""Speed checks, run by `make bench`; each figure is a ratio measured side by side in the same run."""
