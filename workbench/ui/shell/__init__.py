"""The main window and the tray."""
