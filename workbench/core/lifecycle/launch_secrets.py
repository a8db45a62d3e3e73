"""The values of a launch's secrets, held in this process's memory only.

A job spec names its ``secrets``; their values are given at launch (the CLI's ``--env`` /
``--secret-env`` or prompt, the wizard's fields) and must reach the job without being written
to the spec, the store or the log.  :func:`workbench.core.lifecycle.launcher.execute` hands
them to the provider and keeps them here, so the code that starts the job on a cloud machine
later in the same process (:class:`workbench.core.remote.job.RemoteJob`) finds them.  They are
gone when the process ends.  Thread-safe.
"""

from __future__ import annotations

import threading
from typing import Mapping

_lock = threading.Lock()
_values: dict[str, dict[str, str]] = {}


def remember(launch_id: str, values: Mapping[str, str]) -> None:
    if values:
        with _lock:
            _values[launch_id] = dict(values)


def values(launch_id: str) -> dict[str, str]:
    """The secrets given for ``launch_id`` in this process ({} when none or forgotten)."""
    with _lock:
        return dict(_values.get(launch_id, {}))


def forget(launch_id: str) -> None:
    with _lock:
        _values.pop(launch_id, None)
