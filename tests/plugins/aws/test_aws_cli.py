"""The real `workbench` CLI (subprocesses) against moto: offers, launches in two regions, a lost store, down --all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FAST = ["ssh_cidr=198.51.100.23/32", "poll_s=0.01", "terminate_wait_s=10", "retry_backoff_cap_s=0.02",
        "regions=us-east-1,us-west-2"]


class Cli:
    def __init__(self, home: Path) -> None:
        self.home = home
        # no keyring entry: the AWS default chain picks these up (moto accepts any key)
        self.env = dict(os.environ, WORKBENCH_HOME=str(home), AWS_ACCESS_KEY_ID="AKIACLITEST000000001",
                        AWS_SECRET_ACCESS_KEY="cli/secret/value", QT_QPA_PLATFORM="offscreen")
        for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "WORKBENCH_CRASH_AT"):
            self.env.pop(key, None)

    def __call__(self, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                              env=self.env, timeout=timeout, stdin=subprocess.DEVNULL, cwd=ROOT)


@pytest.fixture
def cli(moto, tmp_path) -> Cli:
    run = Cli(tmp_path / "home")
    args = ["profiles", "add", "aws", "moto", "--region", "us-east-1", "--endpoint-url", moto.url]
    for setting in FAST:
        args += ["--set", setting]
    r = run(*args)
    assert r.returncode == 0, r.stderr
    return run


def test_offers_v100_on_aws_lists_p3_2xlarge_with_a_price(cli):
    r = cli("offers", "--gpu", "V100", "--provider", "aws")
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if "p3.2xlarge" in line]
    assert rows and any("$3.06" in line and "us-east-1" in line for line in rows), r.stdout
    assert "Price List" in r.stdout or "snapshot" in r.stdout
    r = cli("offers", "--gpu", "V100", "--provider", "aws", "--json")
    offers = json.loads(r.stdout)["offers"]
    p3 = [o for o in offers if o["instance_type"] == "p3.2xlarge"]
    assert {o["region"] for o in p3} == {"us-east-1", "us-west-2"}
    assert all(o["price_per_hour"] == 3.06 and o["gpu_model"] == "V100" for o in p3)
    assert offers[0]["instance_type"] == "p3.2xlarge"  # the cheapest V100 machine
    assert {o["instance_type"] for o in offers} >= {"p3.8xlarge"}


def test_offers_work_offline_from_the_snapshot(tmp_path):
    run = Cli(tmp_path / "offline")
    assert run("profiles", "add", "aws", "offline", "--region", "eu-west-1", "--endpoint-url",
               "http://127.0.0.1:9", "--set", "max_attempts=1", "--set", "connect_timeout=1").returncode == 0
    r = run("offers", "--gpu", "V100", "--provider", "aws", "--json")
    assert r.returncode == 0, r.stderr
    p3 = next(o for o in json.loads(r.stdout)["offers"] if o["instance_type"] == "p3.2xlarge")
    assert p3["price_per_hour"] == 3.305 and p3["prices"]["source"].startswith("snapshot")


def _spec(tmp_path: Path) -> Path:
    path = tmp_path / "v100.yaml"
    path.write_text("name: v100-job\nrun: python3 train.py\nresources:\n  gpu: V100:1\n  disk_gb: 80\n"
                    "guards:\n  max_runtime: 1h\n")
    return path


def _launch_in_process(home: Path, moto_url: str, spec_path: Path, monkeypatch) -> dict[str, str]:
    """Launch the spec in both regions through the core launcher (the CLI's `launch` also starts the job
    over SSH, which moto's machines cannot answer); returns region → launch id."""
    from workbench.core.providers.accounts import Accounts
    from workbench.core.domain.jobspec import load_spec
    from workbench.core.lifecycle.launcher import execute, choose_offer
    from workbench.core.store.database import Store
    from workbench_testing import MemoryCredentials

    monkeypatch.setenv("WORKBENCH_HOME", str(home))
    creds = MemoryCredentials()
    creds.set("aws", "moto", {"access_key_id": "AKIAINPROCESS0000001", "secret_access_key": "in/process/secret"})
    store = Store.open()
    try:
        accounts = Accounts(store, credentials=creds)
        out = {}
        for region in ("us-east-1", "us-west-2"):
            lp = choose_offer(accounts, load_spec(spec_path), provider="aws", region=region)
            assert (lp.choice.offer.instance_type, lp.choice.offer.region) == ("p3.2xlarge", region)
            assert [i.region for i in execute(accounts, lp)] == [region]
            out[region] = lp.launch_id
        return out
    finally:
        store.close()


def test_launches_in_two_regions_survive_a_lost_store_and_down_all_leaves_nothing(cli, moto, tmp_path, ec2,
                                                                                      monkeypatch):
    launched = _launch_in_process(cli.home, moto.url, _spec(tmp_path), monkeypatch)
    r = cli("status", "--json")
    assert sorted(launch["launch_id"] for launch in json.loads(r.stdout)["launches"]) == sorted(launched.values())
    install_id = (cli.home / "config" / "install-id").read_text().strip()
    # a data volume of the first launch, left behind (as if a later feature had attached one)
    tags = [{"Key": "workbench:managed", "Value": "true"}, {"Key": "workbench:owner", "Value": install_id},
            {"Key": "workbench:launch", "Value": launched["us-east-1"]}]
    ec2("us-east-1").create_volume(Size=50, AvailabilityZone="us-east-1a",
                                   TagSpecifications=[{"ResourceType": "volume", "Tags": tags}])

    for f in (cli.home / "data").glob("state.sqlite3*"):
        f.unlink()  # the store is gone: a new computer, or a wiped disk
    r = cli("status", "--json")
    assert r.returncode == 0, r.stderr
    status = json.loads(r.stdout)
    assert sorted(status["recovered"]) == sorted(launched.values())
    regions = {i["region"] for launch in status["launches"] for i in launch["instances"] if i["billable"]}
    assert regions == {"us-east-1", "us-west-2"}

    r = cli("down", "--all", "--yes", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout)
    assert report["clean"] and len(report["terminated"]) == 2
    for region in ("us-east-1", "us-west-2"):
        client = ec2(region)
        owner = [{"Name": "tag:workbench:owner", "Values": [install_id]}]
        running = [i for res in client.describe_instances(Filters=owner)["Reservations"] for i in res["Instances"]
                   if i["State"]["Name"] != "terminated"]
        assert running == []
        assert client.describe_volumes(Filters=owner + [{"Name": "status", "Values": ["available"]}])["Volumes"] == []
        assert client.describe_addresses(Filters=owner)["Addresses"] == []
        assert client.describe_security_groups(Filters=owner)["SecurityGroups"] == []
        assert client.describe_key_pairs(Filters=owner)["KeyPairs"] == []
