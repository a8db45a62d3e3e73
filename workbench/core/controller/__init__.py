"""The controller: the workbench itself, headless, on a small machine in the user's own account, watching,
relaunching and ending jobs while the app is closed (docs/controller.md)."""
