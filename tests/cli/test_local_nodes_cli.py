"""The CLI on a multi-node Local rehearsal: launch shows per-machine and total price, logs by node, down ends all."""

from __future__ import annotations

import pytest

from wbcli import wait_for

#: real processes, SSH and moto on a shared 2-core machine: slow under load
pytestmark = pytest.mark.timeout(180)

RUN = 'echo "hello from $WORKBENCH_NODE_RANK of $WORKBENCH_NUM_NODES"; echo "second line $WORKBENCH_NODE_RANK"'


def test_launch_logs_by_node_and_status(wb):
    spec = wb.spec("nodes-cli", RUN, "num_nodes: 3\n")
    shown = wb("launch", str(spec), "--provider", "local", "--yes")
    assert shown.rc == 0, shown.err
    assert "3 machines: this-computer" in shown.out and "for all 3" in shown.out
    lid = next(line.split()[-1] for line in shown.out.splitlines() if line.startswith("launch id:"))
    follow = wb("logs", lid, "--follow", "--interval", "0.2", timeout=60)
    assert follow.rc == 0, follow.err
    for rank in range(3):
        assert f"[node {rank}] hello from {rank} of 3\n" in follow.out
        assert f"[node {rank}] second line {rank}\n" in follow.out
    one = wb("logs", lid, "--node", "2")
    assert one.out == "hello from 2 of 3\nsecond line 2\n"
    every = wb("logs", lid)
    assert every.out.index("[node 0] hello") < every.out.index("[node 1] hello") < every.out.index("[node 2] hello")
    bad = wb("logs", lid, "--node", "3")
    assert bad.rc == 1 and "ranks 0 to 2" in bad.err
    status = wb("status", "--json").json
    (entry,) = [x for x in status["launches"] if x["launch_id"] == lid]
    assert sorted(i["extra"]["node_rank"] for i in entry["instances"]) == [0, 1, 2]
    assert all(i["exit_code"] == 0 for i in entry["instances"])


def test_down_ends_every_node(wb):
    spec = wb.spec("nodes-down", "echo up; sleep 60", "num_nodes: 2\n")
    data = wb("launch", str(spec), "--provider", "local", "--yes", "--json").json
    lid = data["launch"]["launch_id"]
    assert data["launch"]["num_nodes"] == 2 and data["launch"]["price_per_hour_total"] == 0
    wait_for(lambda: "[node 1] up" in wb("logs", lid).out, 20)
    down = wb("down", lid, "--yes", "--json")
    assert down.rc == 0 and down.json["clean"], down.out
    status = wb("status", "--json").json
    (entry,) = [x for x in status["launches"] if x["launch_id"] == lid]
    assert len(entry["instances"]) == 2 and not any(i["billable"] for i in entry["instances"])


def test_offers_for_several_nodes_name_the_network(wb):
    out = wb("offers", "--provider", "local", "--nodes", "4")
    assert out.rc == 0, out.err
    assert "NETWORK" in out.out and "PRICE/H (×4)" in out.out
    assert "no fast interconnect" in out.out  # this computer has no RDMA network
    js = wb("offers", "--provider", "local", "--nodes", "4", "--json").json["offers"][0]
    assert js["nodes"] == 4 and js["interconnect_note"].startswith("no fast interconnect")


def test_run_follows_every_node_and_reports_the_heads_exit(wb):
    """`workbench run` of 2 Local nodes: both nodes' lines by rank, then the head's exit code (node 1's is 0)."""
    spec = wb.spec("nodes-run", 'echo "line of $WORKBENCH_NODE_RANK"; '
                   '[ "$WORKBENCH_NODE_RANK" = 0 ] && { sleep 0.5; exit 3; }; exit 0', "num_nodes: 2\n")
    r = wb("run", str(spec), "--provider", "local", "--yes", "--interval", "0.2", timeout=90)
    assert r.rc == 0, r.err
    assert "[node 0] line of 0\n" in r.out and "[node 1] line of 1\n" in r.out
    assert "exit code: 3" in r.err
