"""The Local provider plugin: run jobs on this computer (offline default, free rehearsal).

Entry point ``local = "workbench_local.provider:LocalProvider"``.
"""
