"""The Monitor view: per-GPU plots."""
