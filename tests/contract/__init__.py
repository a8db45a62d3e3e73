"""The provider contract suite: generic tests every provider plugin must pass."""
