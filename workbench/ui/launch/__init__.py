"""The Launch view and its wizard."""
