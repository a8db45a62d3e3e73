"""Tests of the Local provider with real processes."""
