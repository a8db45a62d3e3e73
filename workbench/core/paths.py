"""Where the workbench keeps its files.

Default locations come from platformdirs (XDG on Linux, ~/Library on macOS,
%APPDATA% on Windows).  ``WORKBENCH_HOME`` puts everything under one folder
instead (tests, portable installs): ``$WORKBENCH_HOME/{config,data,logs}``.
Directories are created on first use; an unwritable location raises
ConfigError naming the folder and how to fix it.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from pathlib import Path

from workbench.core.domain.errors import ConfigError

APP_NAME = "cloud-gpu-workbench"
ENV_HOME = "WORKBENCH_HOME"

_LAUNCH_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def _root(kind: str) -> Path:
    home = os.environ.get(ENV_HOME)
    if home:
        return Path(home).expanduser().resolve() / kind
    import platformdirs

    if kind == "config":
        return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))
    if kind == "data":
        return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    return Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))


def _ensure(path: Path) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
        # a probe per process and thread: two threads checking the same folder must not delete each other's
        probe = path / f".write-test.{os.getpid()}.{threading.get_ident()}"
        probe.write_text("")
        probe.unlink(missing_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot write to {path}: {exc.strerror or exc}",
            hint=f"make the folder writable, or set {ENV_HOME} to a folder you own",
        ) from exc
    return path


def _private(path: Path) -> Path:
    """``path`` (one of the app's own folders) readable by its owner only: the store, the logs, job logs
    and outputs, profiles, the SSH config and known_hosts live below it (they were 0755 / 0644)."""
    if os.name == "posix":
        try:
            if path.stat().st_mode & 0o077:
                os.chmod(path, 0o700)
        except OSError:  # a folder we do not own (a shared WORKBENCH_HOME): its owner decides
            pass
    return path


def config_dir() -> Path:
    return _private(_ensure(_root("config")))


def data_dir() -> Path:
    return _private(_ensure(_root("data")))


def log_dir() -> Path:
    return _private(_ensure(_root("logs")))


def price_cache_dir() -> Path:
    """Where `workbench catalog update` keeps fresher price lists (not created here: readers only look)."""
    return _root("data") / "prices"


def store_path() -> Path:
    return data_dir() / "state.sqlite3"


def check_launch_id(launch_id: str) -> str:
    """Reject ids that could escape a folder; launch ids become file names."""
    if not _LAUNCH_ID.match(launch_id):
        raise ConfigError(f"not a valid launch id: {launch_id!r}")
    return launch_id


def job_dir(launch_id: str) -> Path:
    """Per-launch folder kept after the machine is gone (logs, results)."""
    return _ensure(data_dir() / "jobs" / check_launch_id(launch_id))


def job_log(launch_id: str) -> Path:
    """The job's combined stdout/stderr, written locally or streamed back from a cloud."""
    return job_dir(launch_id) / "output.log"


def node_log(launch_id: str, rank: int) -> Path:
    """The output of node ``rank`` of a multi-node launch: the head's is :func:`job_log`, the others'
    ``node-<rank>/output.log`` beside it (so single-node readers keep finding the head's)."""
    if rank <= 0:
        return job_log(launch_id)
    return _ensure(job_dir(launch_id) / f"node-{int(rank)}") / "output.log"


def describe() -> dict[str, str]:
    """Folder locations for README/doctor output (without creating them)."""
    return {k: str(_root(k)) for k in ("config", "data", "logs")}


def install_id() -> str:
    """This installation's id: the ``workbench:owner`` tag on everything it creates.

    Kept in the config folder, apart from the state database, so that losing
    or moving aside a damaged database never orphans running machines: the
    fresh store finds them again by this owner tag.
    """
    import uuid

    path = config_dir() / "install-id"
    try:
        value = path.read_text(encoding="utf-8").strip()
        if re.fullmatch(r"[0-9a-f]{12}", value):
            return value
    except FileNotFoundError:
        pass
    value = uuid.uuid4().hex[:12]
    tmp = path.with_name(f"install-id.{os.getpid()}.{uuid.uuid4().hex[:6]}.tmp")
    tmp.write_text(value + "\n", encoding="utf-8")
    try:
        os.link(tmp, path)  # atomic create-if-absent: two first starts agree on one id
    except FileExistsError:
        value = path.read_text(encoding="utf-8").strip()
    finally:
        tmp.unlink(missing_ok=True)
    return value


@functools.lru_cache(maxsize=1)
def resources_dir() -> Path:
    """The app's read-only resources (icons, examples, catalog snapshots, guard scripts).

    A source checkout or editable install uses the repository's ``resources/``;
    a frozen app (PyInstaller) its bundled copy; an installed wheel the copy under
    ``<prefix>/share/cloud-gpu-workbench/resources``.  Found once per process (it cannot
    move while the app runs; the spend book asks for it once per instance).
    """
    import sys

    candidates = []
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        candidates.append(Path(frozen) / "resources")
    candidates.append(Path(__file__).resolve().parents[2] / "resources")
    candidates.append(Path(sys.prefix) / "share" / APP_NAME / "resources")
    for c in candidates:
        if c.is_dir():
            return c
    return candidates[0]
