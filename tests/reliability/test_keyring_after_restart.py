"""Issue 29: credentials saved today are there after a restart, in the session's own keyring.

The app never sets up a keyring of its own (a throwaway daemon, an in-memory or file backend): it
uses the Secret Service of the session it runs in.  Here that session is the one `make test` starts
(scripts/with-secret-service.sh: the only place a keyring is set up, for tests).  One process saves a
profile's credentials with the CLI and exits; a second, fresh process reads them back through the
app's CredentialStore; no keyring daemon was started by either, and no file of the app's home holds
the secret.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from reltools import needs_secret_service

ROOT = Path(__file__).resolve().parents[2]
SECRET = "s3cr3t-kept-across-restarts-7f1c"

pytestmark = [needs_secret_service]


def _keyring_daemons() -> set[int]:
    """Pids of the gnome-keyring daemons running now."""
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "comm").read_text().strip().startswith("gnome-keyring"):
                    out.add(int(d.name))
            except OSError:
                continue
    return out


def _workbench(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "workbench", *args], input=stdin, env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


READ_BACK = """
import json, sys
from workbench.core.providers.credentials import CredentialStore
store = CredentialStore()
print(json.dumps({"backend": store.backend_name(), "values": store.get("aws", sys.argv[1])}))
"""


def test_saved_credentials_are_there_after_a_restart_and_no_keyring_was_set_up(tmp_path):
    home = tmp_path / "home"
    profile = f"keep-{os.getpid()}"
    daemons = _keyring_daemons()
    assert daemons, "the Secret Service of `make test` is not running"
    try:
        added = _workbench(home, "profiles", "add", "aws", profile, "--region", "us-east-1")
        assert added.returncode == 0, added.stderr
        saved = _workbench(home, "credentials", "set", "aws", profile, "--stdin", "--json",
                           stdin=json.dumps({"access_key_id": "AKIAKEEPTEST00000001", "secret_access_key": SECRET}))
        assert saved.returncode == 0, saved.stdout + saved.stderr
        assert SECRET not in saved.stdout + saved.stderr

        # a new process: what an app started tomorrow does
        env = {**os.environ, "WORKBENCH_HOME": str(home)}
        read = subprocess.run([sys.executable, "-c", READ_BACK, profile], env=env, cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        assert read.returncode == 0, read.stderr
        got = json.loads(read.stdout)
        assert got["values"]["secret_access_key"] == SECRET
        assert got["values"]["access_key_id"] == "AKIAKEEPTEST00000001"
        # the session's Secret Service, through the app's own connection to it; never a file or memory backend
        assert re.search(r"SecretService", got["backend"]), got["backend"]
        # neither process started a keyring daemon of its own
        assert _keyring_daemons() == daemons
        # and the secret is in no file of the app's home
        for f in home.rglob("*"):
            if f.is_file():
                assert SECRET.encode() not in f.read_bytes(), f
    finally:
        _workbench(home, "credentials", "delete", "aws", profile)


def test_make_run_uses_the_sessions_keyring_not_the_tests_one():
    """The throwaway keyring of scripts/with-secret-service.sh is for tests: `make run` never wraps the
    app in it (its secrets would vanish when the app exits)."""
    text = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^run:.*?(?=^\S)", text, re.S | re.M)
    assert recipe and "workbench gui" in recipe.group(0)
    assert "with-secret-service" not in recipe.group(0)
    assert "gnome-keyring-daemon" not in recipe.group(0)
