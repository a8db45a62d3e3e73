"""Local rehearsals with the real torchrun: 2 and 3 nodes on this computer, an all_reduce every rank checks.

The 2-node job is the shipped example, launched by the real CLI; the 3-node one is the same spec
with num_nodes 3 through the core API.
"""

from __future__ import annotations

import pytest

import dataclasses
import json
import os
import subprocess
import sys
import time

from workbench_testing import ROOT

#: real processes, SSH and moto on a shared 2-core machine: slow under load
pytestmark = pytest.mark.timeout(400)

EXAMPLE = ROOT / "resources" / "examples" / "ddp-local-2nodes.yaml"


def _cli(home, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, WORKBENCH_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "workbench", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def _wait_finished(home, launch_id: str, nodes: int, seconds: float = 150.0) -> list[dict]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status = json.loads(_cli(home, "status", "--json").stdout)
        (launch,) = [x for x in status["launches"] if x["launch_id"] == launch_id]
        insts = launch["instances"]
        if len(insts) == nodes and all(i["state"] == "terminated" for i in insts):
            return sorted(insts, key=lambda i: i["extra"]["node_rank"])
        time.sleep(0.5)
    raise AssertionError(f"{launch_id} did not finish within {seconds:g} s")


def _lines(home, launch_id: str, rank: int) -> str:
    return _cli(home, "logs", launch_id, "--node", str(rank)).stdout


def test_the_two_node_example_runs_with_real_torchrun(tmp_path):
    home = tmp_path / "home"
    out = _cli(home, "launch", str(EXAMPLE), "--provider", "local", "--yes", "--json")
    assert out.returncode == 0, out.stderr
    launched = json.loads(out.stdout)
    lid = launched["launch"]["launch_id"]
    assert launched["launch"]["num_nodes"] == 2 and len(launched["instances"]) == 2
    insts = _wait_finished(home, lid, 2)
    logs = [_lines(home, lid, r) for r in (0, 1)]
    assert [i["exit_code"] for i in insts] == [0, 0], logs
    for rank in (0, 1):
        assert f"rank {rank}/2 on node {rank}: all_reduce=3 ok, replicas in sync=True" in logs[rank]
    merged = _cli(home, "logs", lid).stdout  # every node, each line prefixed by its rank
    assert "[node 0] [default0]:rank 0/2" in merged and "[node 1] [default0]:rank 1/2" in merged


def test_three_local_nodes_with_real_torchrun(tmp_path, monkeypatch):
    from workbench.core.domain.jobspec import load_spec
    from workbench.core.lifecycle.launcher import choose_offer, execute
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store
    from workbench.core import paths

    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    acc = Accounts(Store.open(), entries=discover())
    try:
        spec = dataclasses.replace(load_spec(EXAMPLE), num_nodes=3)
        lp = choose_offer(acc, spec, provider="local")
        nodes = execute(acc, lp)
        assert len(nodes) == 3
        prov = acc.provider(lp.profile)
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline:
            now = [i for i in prov.instances() if i.launch_id == lp.launch_id]
            if all(not i.state.active for i in now):
                break
            time.sleep(0.5)
        logs = [paths.node_log(lp.launch_id, r).read_text() for r in range(3)]
        assert sorted(i.exit_code for i in now) == [0, 0, 0], logs
        for rank in range(3):
            assert f"rank {rank}/3 on node {rank}: all_reduce=6 ok, replicas in sync=True" in logs[rank]
    finally:
        acc.store.close()
