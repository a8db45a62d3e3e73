"""Issue 28: six processes on one gnome-keyring for 12 s, and not one "not there" or keyring error.

tests/support/keyring_stress.py runs the roles (readers of profile A on one connection and on a new
connection per read, a rewriter of A, a writer of B, a deleter of profiles of its own), each through
the app's CredentialStore, inside a Secret Service of its own (scripts/with-secret-service.sh), so a
daemon that falls over takes only this run with it.  Before the fix (keyring's stock backend, a
connection per call) the same run crashed the daemon in 3 runs of 3 here, or read a secret as a
keyring error; the issue's note has the numbers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reltools import needs_secret_service

ROOT = Path(__file__).resolve().parents[2]
SECONDS = 12

pytestmark = [needs_secret_service]


@pytest.mark.timeout(SECONDS + 120)
def test_readers_never_see_a_secret_vanish_while_others_rewrite_it():
    proc = subprocess.run(
        [str(ROOT / "scripts" / "with-secret-service.sh"), sys.executable,
         str(ROOT / "tests" / "support" / "keyring_stress.py"), "--seconds", str(SECONDS)],
        capture_output=True, text=True, timeout=SECONDS + 100, cwd=ROOT)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"rc {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    report = json.loads(lines[-1])
    roles = report["roles"]
    problems = {role: {k: n for k, n in counts.items() if k != "ok" and not k.startswith("absorbed ")}
                for role, counts in roles.items()}
    assert not any(problems.values()), (problems, proc.stderr[-3000:])
    assert report["daemon_survived"], report
    # the load was real: every role kept going for the whole run
    assert roles["reader-0"]["ok"] >= 100 and roles["rewriter-3"]["ok"] >= 100, roles
    assert roles["churn-1"]["ok"] >= 30 and roles["churn-2"]["ok"] >= 30, roles
    assert roles["writer-4"]["ok"] >= 50 and roles["deleter-5"]["ok"] >= 20, roles
    assert proc.returncode == 0, proc.stderr[-3000:]
