"""The frozen app's entry point (PyInstaller runs this instead of the console scripts).

One script for both executables of the bundle: ``workbench`` (console: the CLI,
and the desktop app when given no command) and, on Windows and macOS,
``workbench-gui`` (windowed: always the desktop app, whatever arguments the
platform adds, e.g. macOS's old ``-psn_…``).

``workbench -c CODE`` runs CODE like ``python -c``: the frozen binary is the
only Python there is, and ``workbench doctor`` probes Qt in a child process
started as ``sys.executable -c …`` (a Qt platform that cannot load aborts the
process, so that probe must not run in-process).
"""

import os
import sys


def _clean_child_environment() -> None:
    """Give the programs the app starts (jobs, terminals, ssh, editors) the user's environment.

    On Linux the bootloader points LD_LIBRARY_PATH at the bundle and PyInstaller's Qt hook sets
    QT_PLUGIN_PATH.  Both were read already (the dynamic loader reads LD_LIBRARY_PATH once at
    start; Qt finds its plugins through the qt.conf PyInstaller embeds), so dropping them changes
    nothing here, while leaving them would make a job's own python, CUDA or Qt load the bundle's
    libssl/libstdc++/Qt plugins instead of the system's.
    """
    if not (getattr(sys, "frozen", False) and sys.platform.startswith("linux")):
        return
    original = os.environ.pop("LD_LIBRARY_PATH_ORIG", None)
    if original is not None:
        os.environ["LD_LIBRARY_PATH"] = original
    else:
        os.environ.pop("LD_LIBRARY_PATH", None)
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle and os.environ.get("QT_PLUGIN_PATH", "").startswith(bundle):
        del os.environ["QT_PLUGIN_PATH"]


def _run() -> int:
    if len(sys.argv) >= 3 and sys.argv[1] == "-c":
        code, sys.argv = sys.argv[2], ["-c", *sys.argv[3:]]
        exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
        return 0
    name = os.path.splitext(os.path.basename(sys.executable))[0].lower()
    if name.endswith("-gui"):
        from workbench.app import main

        return main([])
    from workbench.cli import main

    return main()


if __name__ == "__main__":
    import multiprocessing

    multiprocessing.freeze_support()  # a no-op unless a library starts worker processes
    _clean_child_environment()
    sys.exit(_run())
