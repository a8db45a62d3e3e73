"""The GUI's running parts: session state, the task runner, the guard loop, settings."""
