"""Widgets and helpers every view shares: dialogs, icons, formats, theme, table model."""
