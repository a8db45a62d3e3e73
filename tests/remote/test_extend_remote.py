"""Extending an Alibaba launch end to end: the cloud's AutoReleaseTime (our ECS test server), the instance
guard on the machine (told over a real SSH: the profile's ``ssh_address`` points the launch's machine at the
sshd harness, a real feature for port forwards) and the app's own guard, all with the new deadline.

"The machine" is this computer as seen through the sshd harness: the guard's config lives in a temp folder
(not /etc, which the harness's user may not write), written by the same ``guard_config`` the boot script
uses; the real guard script then runs against it with its clock set past the old and the new deadline.
"""

from __future__ import annotations

import calendar
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest


from alibaba_ecs import profile_for, shared_server  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GUARD = ROOT / "resources" / "guard" / "workbench_guard.py"
SPEC = "name: ext-ali\nrun: python3 train.py\nresources:\n  gpu: T4:1\nguards:\n  max_runtime: 60m\n"


def _guard(cfg: Path, at: float) -> str:
    p = subprocess.run([sys.executable, str(GUARD), "--config", str(cfg)], capture_output=True, text=True,
                       env=dict(os.environ, WORKBENCH_GUARD_NOW=repr(at)), timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


@pytest.mark.timeout(120)
def test_extending_an_alibaba_launch_moves_the_release_the_machine_guard_and_the_app_guard(
        tmp_path, monkeypatch, sshd_server):
    from workbench.core.domain.errors import ConfigError
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.domain.models import Profile
    from workbench.core.remote.extend import extend_launch
    from workbench.core.lifecycle.guards import GuardEngine
    from workbench.core.lifecycle.launcher import choose_offer, execute
    from workbench.core.lifecycle.teardown import teardown
    from workbench.core.providers import bootscript
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.sshkeys import ensure_keypair
    from workbench.core.store.database import Store
    from workbench_testing import MemoryCredentials

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    ali = shared_server()
    account = ali.new_account()
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    store = Store.open()
    creds = MemoryCredentials()
    creds.set("alibaba", "ali", {"access_key_id": account.access_key_id, "access_key_secret": account.secret})
    acc = Accounts(store, credentials=creds)
    prof = profile_for(ali, account, name="ali",
                       ssh_address=f"{sshd_server.user}@127.0.0.1:{sshd_server.port}")
    acc.save_profile(Profile(prof.name, "alibaba", prof.region, None, dict(prof.settings)))
    sshd_server.authorize(ensure_keypair(store.path.parent, key_type="rsa").public_openssh)
    try:
        spec = parse_spec(SPEC)
        lp = choose_offer(acc, spec, provider="alibaba")
        (inst,) = execute(acc, lp)
        lid = lp.launch_id
        created = store.get_launch(lid).created_at
        release_before = ali.instances(account)[0]["AutoReleaseTime"]

        # what the boot script installs, in a folder the harness's user can write
        machine = tmp_path / "machine"
        (machine / "state").mkdir(parents=True)
        shutdown_log = machine / "shutdown.calls"
        cfg_path = machine / "guard.json"
        cfg = bootscript.guard_config(spec, lid, "alibaba", not_after=created + 3600, extra={
            "state_path": str(machine / "state" / f"{lid}.json"), "console": str(machine / "console.log"),
            "nvidia_smi": "/nonexistent/nvidia-smi", "gpu_reads": 1, "job_dirs": [],
            "shutdown": ["sh", "-c", f"echo shutdown >> {shutdown_log}"]})
        cfg_path.write_text(json.dumps(cfg))
        assert "armed" in _guard(cfg_path, created)  # first run on the machine: its clock starts

        result = extend_launch(acc, lid, 120, config_path=str(cfg_path))

        assert result.max_runtime_minutes == 180 and result.previous_minutes == 60
        assert result.ends_at == pytest.approx(created + 180 * 60)
        assert result.currency == "CNY" and result.projected_cost is not None and result.projected_cost > 0
        # the cloud: ModifyInstanceAutoReleaseTime accepted, and the server holds the new time (+ 60 min margin)
        assert result.cloud_release_moved
        assert [c.code for c in ali.calls(account, "ecs:ModifyInstanceAutoReleaseTime")] == [None]
        release = ali.instances(account)[0]["AutoReleaseTime"]
        assert release != release_before
        at = calendar.timegm(time.strptime(release, "%Y-%m-%dT%H:%M:%SZ"))
        assert created + 240 * 60 - 60 <= at <= created + 240 * 60 + 60
        # the machine: its guard's limits moved by the same two hours
        assert result.machines_told == [inst.instance_id]
        got = json.loads(cfg_path.read_text())
        assert got["max_runtime_s"] == 180 * 60 and got["not_after"] == pytest.approx(created + 3600 + 7200)
        assert got["state_path"] == cfg["state_path"] and got["launch_id"] == lid  # the rest kept
        # ... and it honours them: past the old deadline it leaves the machine alone, at the new one it acts
        _guard(cfg_path, created + 3600 + 60)
        assert not shutdown_log.exists()
        # extending again adds to the new values (absolute values written: a retry after a failure is safe)
        again = extend_launch(acc, lid, 30, config_path=str(cfg_path))
        assert again.max_runtime_minutes == 210
        assert json.loads(cfg_path.read_text())["not_after"] == pytest.approx(created + 3600 + 150 * 60)
        assert "DECISION" in _guard(cfg_path, created + 210 * 60 + 1) and shutdown_log.exists()
        # once the machine's guard has fired, an extension is refused and the app keeps its deadline
        with pytest.raises(ConfigError, match="already decided to end it"):
            extend_launch(acc, lid, 30, config_path=str(cfg_path))
        assert store.get_launch(lid).spec["guards"]["max_runtime_minutes"] == 210
        # the app: the guard engine past the old deadline decides nothing; at the new one it tears down
        quiet = GuardEngine(acc, clock=lambda: created + 3600 + 60, collect_samples=False).poll(refresh=False)
        assert [e for e in quiet if e.guard == "max_runtime"] == []
    finally:
        report = teardown(acc, None, timeout=30, poll=0.05)
        store.close()
    assert report.clean
