"""No secret leaks: a whole session with sentinel secrets, then every file and all output searched.

The session, all through the real CLI: AWS credentials (on moto) and Azure credentials (on the ARM
server) stored with `credentials set` (sentinel values), both checked; a launch on each that is
SIGKILLed while it waits for SSH (the crash); `status`, `watch --once`, `cost` (monitoring); a
provoked error on each cloud (AWS answers AuthFailure, an Azure profile with a wrong sentinel
secret); `down --all` (refused for the wrong profile, said so), then without it (teardown); `doctor`.  Then the sentinels, plain and in the encodings a
careless writer would use (JSON-escaped, URL-encoded, base64), are searched for in every file
under WORKBENCH_HOME (data, config, logs, the GUI's settings), the temporary directory the
processes were given (TMPDIR), and all captured stdout/stderr: 0 hits.  The keyring's own store
under XDG_DATA_HOME must hold them only encrypted: a plaintext hit there fails too.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import time
import urllib.parse
from pathlib import Path

import pytest

from aws_moto import FaultRule
from reltools import aws_remains, needs_secret_service, unique

pytestmark = [needs_secret_service]  # the keyring marker (tests/support/secret_service.py)


def _forms(secret: str) -> list[bytes]:
    raw = secret.encode()
    forms = [raw, json.dumps(secret)[1:-1].encode(), urllib.parse.quote(secret, safe="").encode(),
             base64.b64encode(raw), base64.urlsafe_b64encode(raw)]
    return list(dict.fromkeys(forms))  # some coincide (no character that needs escaping)


def _hits(root: Path, forms: list[bytes]) -> list[str]:
    found = []
    for path in root.rglob("*"):
        try:
            if not path.is_file() or path.is_symlink():
                continue
            data = path.read_bytes()
        except OSError:
            continue
        found += [f"{path}: {f[:12]!r}…" for f in forms if f in data]
    return found


@pytest.mark.timeout(150)
def test_a_full_session_leaves_no_secret_anywhere(wbhome, moto, arm, account, tmp_path):
    aws_secret = f"SENTINEL/aws+{os.urandom(8).hex()}"
    azure_secret = account.secret  # the ARM server's service principal secret, a fresh random value
    wrong_secret = f"SENTINEL-wrong-{os.urandom(8).hex()}"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(wbhome.env, TMPDIR=str(tmp))
    env.pop("AWS_ACCESS_KEY_ID")
    env.pop("AWS_SECRET_ACCESS_KEY")
    outputs: list[str] = []

    def wb(*args: str, stdin: str | None = None, ok: tuple[int, ...] = (0,)):
        r = wbhome(*args, env=env, stdin=stdin)
        outputs.extend([r.stdout, r.stderr])
        assert r.returncode in ok, f"{args}: {r.returncode}\n{r.stdout}\n{r.stderr}"
        return r

    wbhome.env = env
    # keyring entries are shared by the parallel test workers: names of this test's own
    aws, good, wrong = unique("moto"), unique("arm"), unique("arm-wrong")
    wbhome.add_aws(moto, aws)
    wbhome.add_azure(arm, account, good, False)
    wbhome.add_azure(arm, account, wrong, False)
    try:
        wb("credentials", "set", "aws", aws, "--stdin",
           stdin=json.dumps({"access_key_id": "AKIASENTINEL00000001", "secret_access_key": aws_secret}))
        wb("credentials", "set", "azure", good, "--stdin", stdin=json.dumps({"client_secret": azure_secret}))
        wb("credentials", "set", "azure", wrong, "--stdin", stdin=json.dumps({"client_secret": wrong_secret}))
        wb("credentials", "check", "aws", aws)
        wb("credentials", "check", "azure", good)
        r = wb("credentials", "check", "azure", wrong, ok=(3,))  # provoked error 1: a wrong secret
        assert "secret" in (r.stdout + r.stderr).lower()

        # launches: each is killed while it waits for SSH on a machine that never boots (the crash)
        for args, cloud in ((("--provider", "aws"), "aws"), (("--profile", good), "azure")):
            spec = wbhome.spec(f"secret-{cloud}", gpu="V100:1" if cloud == "aws" else "T4:1")
            proc = wbhome.popen("launch", str(spec), *args, "--yes", env=env)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None:
                st = json.loads(wbhome("status", "--json", env=env).stdout or "{}")
                if any(launch["instances"] for launch in st.get("launches", [])
                       if launch["provider"] == cloud):
                    break
                time.sleep(0.5)
            proc.send_signal(signal.SIGKILL)
            out, err = proc.communicate(timeout=10)
            outputs.extend([out, err])
        wb("status", "--json", ok=(0, 3))
        wb("status", ok=(0, 3))
        wb("watch", "--once", ok=(0, 3, 4))
        wb("cost", ok=(0, 3))
        moto.faults.add(FaultRule(service="ec2", error="AuthFailure", status=401,
                                  message="AWS was not able to validate the provided access credentials"))
        wb("status", "--json", ok=(0, 3))  # provoked error 2: the cloud refuses the key
        moto.faults.rules.clear()
        r = wb("down", "--all", "--yes", "--json", ok=(3,))  # the wrong profile cannot be asked: said so
        assert not json.loads(r.stdout)["clean"] and wrong in r.stdout
        wb("credentials", "delete", "azure", wrong)
        wb("profiles", "remove", wrong)
        report = json.loads(wb("down", "--all", "--yes", "--json", ok=(0, 3)).stdout)
        assert report["clean"], report
        wb("doctor", ok=(0, 1))
    finally:
        moto.faults.rules.clear()
        for name in (("aws", aws), ("azure", good), ("azure", wrong)):
            wbhome("credentials", "delete", *name, env=env)
    assert aws_remains(moto, wbhome.install_id())["instances"] == []
    assert arm.groups(account.subscription) == []

    forms = list(dict.fromkeys(f for s in (aws_secret, azure_secret, wrong_secret) for f in _forms(s)))
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "x.log").write_bytes(b"..." + base64.b64encode(aws_secret.encode()) + b"...")
    assert len(_hits(planted, forms)) == 1  # the search does find a secret where there is one
    assert _hits(wbhome.path, forms) == []
    assert _hits(tmp, forms) == []
    text = "\n".join(outputs).encode()
    assert [f for f in forms if f in text] == []
    assert sum(1 for f in wbhome.path.rglob("*") if f.is_file()) >= 3  # the scan did look at files
    keyring_home = os.environ.get("XDG_DATA_HOME")
    if keyring_home:
        assert _hits(Path(keyring_home), forms) == []  # the keyring stores them encrypted only
