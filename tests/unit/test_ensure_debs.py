"""scripts/ensure-debs.sh waits for another package manager's lock instead of failing at once (issue 29).

A stand-in ``apt-get`` first on PATH answers as apt does while unattended-upgrades holds the lock,
then succeeds (and a stand-in ``id`` says root); ``dpkg-query`` is the real one, asked for a package
no machine has.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCKED = ("E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (unattended-upgr)\n"
          "E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?")


def _fake_apt(tmp_path: Path, locked_calls: int) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    (bin_dir / "apt-get").write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {calls}\n'
        f'n=$(wc -l < {calls})\n'
        f'if [ "$n" -le {locked_calls} ]; then printf "%s\\n" "{LOCKED}" >&2; exit 100; fi\n'
        "exit 0\n")
    (bin_dir / "apt-get").chmod(0o755)
    (bin_dir / "id").write_text("#!/bin/sh\necho 0\n")  # the script installs only as root: be root for it
    (bin_dir / "id").chmod(0o755)
    return dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", ENSURE_DEBS_LOCK_POLL="1",
                ENSURE_DEBS_LOCK_WAIT="4")


def test_a_held_lock_is_waited_for(tmp_path):
    env = _fake_apt(tmp_path, locked_calls=2)
    r = subprocess.run(["sh", str(ROOT / "scripts" / "ensure-debs.sh"), "workbench-no-such-package"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "waiting for another package manager to finish" in r.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[:3] == ["update -qq"] * 3  # refused twice while locked, then done
    assert calls[3].startswith("install -y -qq --no-install-recommends") and "workbench-no-such-package" in calls[3]


def test_a_lock_held_too_long_fails_saying_so(tmp_path):
    env = _fake_apt(tmp_path, locked_calls=1000)
    r = subprocess.run(["sh", str(ROOT / "scripts" / "ensure-debs.sh"), "workbench-no-such-package"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 1
    assert "still holds apt's lock after 4 s" in r.stderr and "Could not get lock" in r.stderr


def test_another_apt_error_is_not_waited_on(tmp_path):
    env = _fake_apt(tmp_path, locked_calls=0)
    (tmp_path / "bin" / "apt-get").write_text("#!/bin/sh\necho 'E: Unable to locate package x' >&2\nexit 100\n")
    r = subprocess.run(["sh", str(ROOT / "scripts" / "ensure-debs.sh"), "workbench-no-such-package"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 1 and "Unable to locate package" in r.stderr and "waiting" not in r.stderr
