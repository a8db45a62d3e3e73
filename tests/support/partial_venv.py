"""A real venv that sees this project's installed packages except some: an install without an extra.

``python -m venv --without-pip`` (~1 s), then every entry of this interpreter's site-packages is
symlinked into it except those ``hidden`` says no to (by the entry's name: a package folder, a
module or its ``.dist-info``).  The project itself is installed in editable mode, so its code and
entry points come along.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Callable


def make_venv(root: Path, hidden: Callable[[str], bool]) -> Path:
    """Create the venv at ``root``; returns ``root`` (its Python is ``root / "bin" / "python"``)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    site = Path(subprocess.run([str(root / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True, check=True).stdout.strip())
    source = Path(sysconfig.get_paths()["purelib"])
    for entry in source.iterdir():
        if not hidden(entry.name) and entry.name != "__pycache__":
            (site / entry.name).symlink_to(entry)
    return root
