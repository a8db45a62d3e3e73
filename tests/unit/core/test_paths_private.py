"""The app's own folders are readable by their owner only (issue 30: store, logs, job logs, profiles, SSH
config and known_hosts were world-readable, 0644 files in 0755 folders)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

from workbench.core import paths


def test_config_data_and_log_folders_are_private(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.ENV_HOME, str(tmp_path / "home"))
    old = os.umask(0o022)  # the usual umask: new folders would be 0755
    try:
        folders = [paths.config_dir(), paths.data_dir(), paths.log_dir()]
    finally:
        os.umask(old)
    assert [stat.S_IMODE(f.stat().st_mode) for f in folders] == [0o700] * 3


def test_a_folder_made_open_before_is_closed_again(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.ENV_HOME, str(tmp_path / "home"))
    (tmp_path / "home" / "data").mkdir(parents=True, mode=0o755)
    os.chmod(tmp_path / "home" / "data", 0o755)  # an install from before this change
    assert stat.S_IMODE(paths.data_dir().stat().st_mode) == 0o700


def test_a_cli_run_leaves_nothing_readable_by_others(tmp_path):
    env = dict(os.environ, WORKBENCH_HOME=str(tmp_path / "home"), QT_QPA_PLATFORM="offscreen")
    r = subprocess.run([sys.executable, "-m", "workbench", "status", "--json"], capture_output=True, text=True,
                       env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    for kind in ("config", "data", "logs"):
        folder = tmp_path / "home" / kind
        if folder.exists():
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
