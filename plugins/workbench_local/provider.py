"""Placeholder; replaced by the Local provider."""
