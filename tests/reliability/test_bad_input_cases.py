"""Bad input, the cases not already covered elsewhere (docs/reliability.md lists all of them, with the
test that covers each): every case gets a clear message, no traceback, loses nothing, leaks nothing.

Spec cases go through ``load_spec`` (what `workbench launch` and the GUI's wizard call) and, for a
few, the real CLI.  Cloud cases run the real CLI against moto.  The full disk is a real small tmpfs
mounted over the WORKBENCH_HOME (needs root, as `make test` runs here).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from aws_moto import FaultRule
from reltools import GPU_SPEC, aws_remains, ec2_client
from workbench.core.domain.errors import SpecError, WorkbenchError
from workbench.core.domain.jobspec import load_spec, parse_spec, spec_to_dict

LOCAL = "name: {name}\nrun: sleep 30\nguards:\n  max_runtime: 5m\n"


def _spec_error(tmp_path: Path, text: str | bytes) -> str:
    p = tmp_path / "train.yaml"
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(SpecError) as info:
        load_spec(p)
    return str(info.value)


@pytest.mark.parametrize("case, text, expected", [
    ("tabs", "name: x\nrun: echo\nresources:\n\tgpu: V100:1\n",
     "train.yaml:4: invalid YAML: a tab character: indent with spaces (column 1)"),
    ("duplicate key", "name: x\nrun: echo\nname: y\n", "train.yaml:3: name: appears twice in the same mapping"),
    ("huge disk", "name: x\nrun: echo\nresources:\n  disk_gb: 99999999999999999999\n",
     "train.yaml:4: resources.disk_gb: must be a whole number from 1 to 65536"),
    ("huge float", "name: x\nrun: echo\nguards:\n  budget_usd: 1e400\n", "train.yaml:4: guards.budget_usd: must be"),
    ("centuries of runtime", "name: x\nrun: echo\nguards:\n  max_runtime: 99999999d\n",
     "train.yaml:4: guards.max_runtime: must be at most 366 days"),
    ("1000 GPUs", "name: x\nrun: echo\nresources:\n  gpu: V100:1000\n",
     "train.yaml:4: resources.gpu: GPU count must be a whole number from 1 to 64, got '1000'"),
    ("unicode name", "name: \"训练 ü 🚀\"\nrun: echo\n", "train.yaml:1: name: must be 1-63 letters, digits"),
    ("empty", "", "train.yaml:1: the spec is empty — it needs at least 'name' and 'run'"),
    ("a list", "- a\n- b\n", "train.yaml:1: the top level must be a mapping of fields"),
    ("no run", "name: x\n", "train.yaml:1: run: required field is missing"),
    ("binary", b"\x89PNG\r\n\x1a\n\xff\xfe\x00", "train.yaml: cannot read job spec: not UTF-8 text"),
])
def test_bad_specs_name_file_line_and_field(tmp_path, case, text, expected):
    msg = _spec_error(tmp_path, text)
    assert expected in msg, msg
    assert "Traceback" not in msg


def test_unicode_in_values_is_kept_exactly(tmp_path):
    spec = parse_spec("name: cn-job\nrun: \"echo 训练开始 ü 🚀\"\nenv:\n  NOTE: \"数据集 ✓\"\n")
    assert spec.run == "echo 训练开始 ü 🚀" and spec.env["NOTE"] == "数据集 ✓"
    assert spec_to_dict(spec)["run"] == "echo 训练开始 ü 🚀"


def test_a_10_mb_spec_is_refused_quickly_and_nothing_is_launched(wbhome, tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("name: big\nrun: echo\nenv:\n" + "".join(f"  K{i}: \"{'x' * 90}\"\n" for i in range(105_000)))
    assert big.stat().st_size > 10_000_000
    t = time.monotonic()
    r = wbhome("launch", str(big), "--provider", "local", "--yes")
    assert r.returncode == 1 and re.search(r"the job spec is 1\d\.\d MB; at most 1024 KB", r.stderr), r.stderr
    assert "hint: keep data" in r.stderr and time.monotonic() - t < 20
    assert wbhome.json("status")["launches"] == []


def test_missing_path_and_a_folder_as_spec(wbhome, tmp_path):
    r = wbhome("launch", str(tmp_path / "nosuch.yaml"), "--yes")
    assert r.returncode == 1 and "nosuch.yaml: cannot read job spec: No such file or directory" in r.stderr
    r = wbhome("launch", str(tmp_path), "--yes")
    assert r.returncode == 1 and "cannot read job spec: Is a directory" in r.stderr


def test_a_foreign_sqlite_database_is_moved_aside_untouched(wbhome):
    data = wbhome.path / "data"
    data.mkdir(parents=True)
    db = data / "state.sqlite3"
    with sqlite3.connect(db) as conn:  # another application's database where ours should be
        conn.execute("CREATE TABLE moz_places (id INTEGER, url TEXT)")
        conn.execute("INSERT INTO moz_places VALUES (1, 'https://example.org')")
    before = db.read_bytes()
    r = wbhome("status", "--json")
    assert r.returncode == 0 and "moved aside" in r.stderr and "fresh one" in r.stderr, r.stderr
    aside = [p for p in data.iterdir() if p.name.startswith("state.sqlite3.corrupt-")]
    assert len(aside) == 1 and aside[0].read_bytes() == before  # nothing lost
    assert json.loads(r.stdout)["launches"] == []


def test_a_plugin_that_raises_during_a_launch_is_a_clear_error_and_recorded(tmp_path, monkeypatch):
    from workbench.core.providers.accounts import Accounts
    from workbench.core.lifecycle.launcher import execute, choose_offer
    from workbench.core.domain.models import Profile
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store
    from workbench_testing import FIXTURE_PLUGINS, MemoryCredentials

    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.syspath_prepend(str(FIXTURE_PLUGINS))
    store = Store.open()
    creds = MemoryCredentials()
    acc = Accounts(store, entries=discover(), credentials=creds)
    acc.save_profile(Profile("fake", "fakecloud", "fake-east"))
    creds.set("fakecloud", "fake", {"account": "acct-1", "token": "tok"})
    from workbench_fakecloud.provider import FakeCloudProvider

    def boom(self, req):
        raise RuntimeError("plugin bug: list index out of range")

    monkeypatch.setattr(FakeCloudProvider, "launch", boom)
    lp = choose_offer(acc, parse_spec("name: boom\nrun: echo\nresources:\n  gpu: V100:1\n"), provider="fakecloud")
    with pytest.raises(WorkbenchError) as info:
        execute(acc, lp)
    assert info.value.message == "launch failed: RuntimeError: plugin bug: list index out of range"
    rec = store.find_launch(lp.launch_id)
    assert rec.status == "failed" and "RuntimeError" in rec.error
    store.close()


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB tmpfs mounted where the WORKBENCH_HOME goes (root only)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (not root?): {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_a_full_disk_is_a_clear_error_and_loses_nothing(small_disk, tmp_path):
    from reltools import Home

    home = Home(small_disk / "home")
    assert home("profiles", "add", "local", "second").returncode == 0
    spec = tmp_path / "job.yaml"
    spec.write_text(LOCAL.format(name="fulldisk"))
    filler = small_disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:  # fill the filesystem to the last byte
        for chunk in (65536, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * chunk)
            except OSError:
                pass
    finally:
        os.close(fd)
    r = home("launch", str(spec), "--provider", "local", "--yes")
    assert r.returncode != 0
    assert "Traceback" not in r.stderr and "Logging error" not in r.stderr, r.stderr
    assert "the disk is full" in r.stderr and "hint: free some space" in r.stderr, r.stderr
    assert list((home.path / "data").glob("*.corrupt-*")) == []  # a full disk is not a damaged store
    filler.unlink()
    r = home("profiles", "list", "--json")
    assert r.returncode == 0 and "second" in r.stdout  # what was stored before is still there
    st = home.json("status")
    assert st["billable"] == 0 or home.json("down", "--all", "--yes")["clean"]
    with sqlite3.connect(home.path / "data" / "state.sqlite3") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# -- cloud cases on moto -------------------------------------------------------------------------------
def test_an_unknown_region_is_named(wbhome, moto):
    wbhome.add_aws(moto)
    spec = wbhome.spec("region", text=GPU_SPEC.format(name="region", gpu="V100:1"))
    r = wbhome("launch", str(spec), "--provider", "aws", "--region", "nowhere-9", "--yes")
    assert r.returncode in (1, 3) and "nowhere-9" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert wbhome.json("status")["billable"] == 0


def test_a_price_api_answering_garbage_falls_back_to_the_snapshot(wbhome, moto):
    wbhome.add_aws(moto)
    moto.faults.add(FaultRule(service="pricing", respond=(200, "application/x-amz-json-1.1", "{<html>garbage")))
    moto.faults.add(FaultRule(operation="DescribeSpotPriceHistory", respond=(200, "text/xml", "<<not xml")))
    r = wbhome("offers", "--gpu", "V100", "--provider", "aws", "--json")
    assert r.returncode == 0, r.stderr
    offers = [o for o in json.loads(r.stdout)["offers"] if o["instance_type"] == "p3.2xlarge"]
    assert offers and all(o["price_per_hour"] > 0 for o in offers)
    assert all(not o["prices"]["source"].startswith("live") for o in offers), offers[0]["prices"]


def test_an_instance_deleted_behind_the_apps_back(wbhome, moto, monkeypatch):
    from workbench.core.providers.accounts import Accounts
    from workbench.core.lifecycle.launcher import execute, choose_offer
    from workbench.core.store.database import Store
    from workbench_testing import MemoryCredentials

    wbhome.add_aws(moto)
    monkeypatch.setenv("WORKBENCH_HOME", str(wbhome.path))
    store = Store.open()
    creds = MemoryCredentials()
    creds.set("aws", "moto", {"access_key_id": "AKIABEHIND0000000001", "secret_access_key": "behind/secret"})
    acc = Accounts(store, credentials=creds)
    lp = choose_offer(acc, parse_spec(GPU_SPEC.format(name="behind", gpu="V100:1")), provider="aws")
    inst = execute(acc, lp)[0]
    store.close()
    ec2_client(moto).terminate_instances(InstanceIds=[inst.instance_id])  # someone used the console
    st = wbhome.json("status")
    entry = next(launch for launch in st["launches"] if launch["launch_id"] == lp.launch_id)
    assert st["billable"] == 0 and entry["instances"][0]["state"] in ("terminated", "shutting-down")
    report = wbhome.json("down", "--all", "--yes")
    assert report["clean"]


def test_a_clock_jump_never_gives_negative_or_absurd_spend():
    from workbench.core.money.spend import accrued
    from workbench.core.store.database import LedgerEntry

    now = time.time()
    # the clock jumped back an hour after the machine started: the start is "in the future"
    future = [LedgerEntry("aws", "p", "i-1", now + 3600, "running", 3.06)]
    assert accrued(future, now=now) == 0.0
    # it jumped forward a day and back: entries out of order still cost their real overlap only
    jumbled = [LedgerEntry("aws", "p", "i-1", now - 3600, "running", 3.06),
               LedgerEntry("aws", "p", "i-1", now - 7200, "running", 3.06),
               LedgerEntry("aws", "p", "i-1", now - 1800, "terminated", 3.06)]
    cost = accrued(jumbled, now=now)
    assert 0.0 <= cost <= 3.06 * 2 + 1e-6, cost


def test_cloud_refusals_through_the_cli_are_named_and_leave_nothing(wbhome, moto):
    """Quota 0, capacity gone, a revoked key and 64 GPUs, as the user of `workbench launch` sees them."""
    wbhome.add_aws(moto)
    spec = wbhome.spec("refused")
    moto.faults.add(FaultRule(operation="RunInstances", error="VcpuLimitExceeded",
                              message="You have requested more vCPU capacity than your current vCPU limit of 0"))
    r = wbhome("launch", str(spec), "--provider", "aws", "--yes")
    assert r.returncode == 3 and "the account's quota 'Running On-Demand P instances' does not allow p3.2xlarge" \
        in r.stderr and "L-417A185B" in r.stderr, r.stderr
    moto.faults.rules.clear()
    moto.faults.add(FaultRule(operation="RunInstances", error="InsufficientInstanceCapacity"))
    r = wbhome("launch", str(spec), "--provider", "aws", "--yes")
    assert r.returncode == 3 and "AWS has no capacity for p3.2xlarge in any zone of us-east-1" in r.stderr, r.stderr
    moto.faults.rules.clear()
    moto.faults.add(FaultRule(error="InvalidClientTokenId", status=403,
                              message="The security token included in the request is invalid."))
    r = wbhome("credentials", "check", "aws", "moto")
    assert r.returncode == 3 and "the access key id is not valid (InvalidClientTokenId)" in r.stderr, r.stderr
    assert wbhome.env["AWS_SECRET_ACCESS_KEY"] not in r.stdout + r.stderr
    moto.faults.rules.clear()
    r = wbhome("launch", str(wbhome.spec("many", gpu="A100:64")), "--provider", "aws", "--yes")
    assert r.returncode == 1 and "no offer on profile 'moto' in us-east-1 matches 64× A100" in r.stderr, r.stderr
    st = wbhome.json("status")
    assert st["billable"] == 0 and {launch["status"] for launch in st["launches"]} == {"failed"}
    assert aws_remains(moto, wbhome.install_id()) == {"instances": [], "volumes": [], "addresses": [], "groups": [],
                                                      "keys": []}
