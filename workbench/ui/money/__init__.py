"""The Spend view."""
