"""Multi-node jobs over real sshd "nodes": the AWS plugin against moto, each node's private address its sshd.

The engines (torchrun, mpirun) are in tests/distributed/ (part of ``make test``); here the
jobs use the standard library only: a TCP sum through WORKBENCH_MASTER_ADDR/PORT (the shape of an
all_reduce) and ``ssh`` between the nodes with the launch's own key — proving the variables, the
barrier, the inter-node SSH, the head's exit, a failing and a lost node, and that nothing is left
in moto afterwards.
"""

from __future__ import annotations

import pytest

import socket
import textwrap
import threading

from cluster_nodes import MotoCluster

from .helpers import Events, quick_options, wait_until

from workbench.core import paths
from workbench.core.domain.jobspec import parse_spec
from workbench.core.remote.cluster import ClusterJob
from workbench.core.remote.job import read_state

#: real processes, SSH and moto on a shared 2-core machine: slow under load
pytestmark = pytest.mark.timeout(300)

REDUCE = textwrap.dedent("""\
    import os, socket, time
    rank, n = int(os.environ["WORKBENCH_NODE_RANK"]), int(os.environ["WORKBENCH_NUM_NODES"])
    addr, port = os.environ["WORKBENCH_MASTER_ADDR"], int(os.environ["WORKBENCH_MASTER_PORT"])
    ips = os.environ["WORKBENCH_NODE_IPS"].split()
    assert ips[0] == addr and len(ips) == n, ips
    if rank == 0:
        srv = socket.create_server((addr, port))
        peers = [srv.accept()[0] for _ in range(n - 1)]
        total = 1 + sum(int(p.recv(16)) for p in peers)
        for p in peers:
            p.sendall(str(total).encode())
    else:
        for _ in range(400):
            try:
                s = socket.create_connection((addr, port)); break
            except OSError:
                time.sleep(0.05)
        s.sendall(str(rank + 1).encode())
        total = int(s.recv(16))
    assert total == n * (n + 1) // 2, total
    print(f"node {rank} of {n}: sum={total} ok", flush=True)
    open("result.txt", "w").write(f"{rank}:{total}\\n")
    """)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spec(tmp_path, run: str, nodes: int = 2, setup: str | None = None, extra: str = ""):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "reduce.py").write_text(REDUCE)
    text = (f"name: ddp-test\nnum_nodes: {nodes}\nworkdir: {work}\nresources:\n  gpu: V100:1\n"
            f"env:\n  WORKBENCH_MASTER_PORT: '{_free_port()}'\nrun: |\n" + textwrap.indent(run, "  ") + extra)
    if setup:
        text += "\nsetup: |\n" + textwrap.indent(setup, "  ")
    return parse_spec(text + "\n", source=str(tmp_path / "spec.yaml"), base_dir=tmp_path)


def test_two_sshd_nodes_run_one_job_through_the_launch_and_leave_nothing(tmp_path, monkeypatch):
    run = ("python3 reduce.py\n"
           "for a in $WORKBENCH_NODE_IPS; do ssh -F \"$WORKBENCH_SSH_CONFIG\" \"$a\" "
           "'echo \"reached $(cat \"$WORKBENCH_REMOTE_DIR\"/jobs/*/cluster/rank)\"'; done\n")
    setup = 'echo "setup on $WORKBENCH_NODE_RANK"; [ "$WORKBENCH_NODE_RANK" = 1 ] && sleep 1; true\n'
    spec = _spec(tmp_path, run, setup=setup, extra="\noutputs: [result.txt]\noutputs_from: all")
    with MotoCluster.create(tmp_path, monkeypatch) as mc:
        nodes = mc.launch(spec)
        assert [i.extra["node_rank"] for i in nodes] == [0, 1]
        assert [i.host for i in nodes] == [i.extra["private_ip"] for i in nodes]
        events = Events()
        job = ClusterJob(mc.accounts, nodes, spec, quick_options(), on_event=events)
        code = job.run()
        lid = nodes[0].launch_id
        logs = [paths.node_log(lid, r).read_text() for r in (0, 1)]
        assert code == 0, logs
        for rank in (0, 1):
            assert f"setup on {rank}" in logs[rank]
            assert f"node {rank} of 2: sum=3 ok" in logs[rank]
            assert "reached 0" in logs[rank] and "reached 1" in logs[rank]  # the launch's key, both ways
            assert "all 2 nodes finished setup; starting run" in logs[rank]
            assert (paths.job_dir(lid) / "outputs" / f"node-{rank}" / "result.txt").read_text() == f"{rank}:3\n"
            env = (mc.remote_dir(rank) / "jobs" / lid / "env.sh").read_text()
            assert f"WORKBENCH_NODE_RANK={rank}" in env and f"SKYPILOT_NODE_RANK={rank}" in env
            assert f"DSTACK_MASTER_NODE_IP={nodes[0].extra['private_ip']}" in env
            hostfile = (mc.remote_dir(rank) / "jobs" / lid / "cluster" / "hostfile").read_text()
            assert hostfile == "".join(f"{i.extra['private_ip']} slots=1\n" for i in nodes)
        # setup everywhere happened before run anywhere: node 1's slow setup precedes node 0's run output
        assert logs[0].index("setup on 0") < logs[0].index("all 2 nodes finished setup")
        assert {e.data.get("node") for e in events.items if e.data.get("node") is not None} == {0, 1}
        assert read_state(lid)["phase"] == "done" and read_state(lid)["exit_code"] == 0
        assert mc.aws_state() == {"instances": [], "groups": [], "keys": [], "placement": []}
        assert mc.accounts.store.get_launch(lid).error in (None, "")


def test_a_failing_node_fails_the_launch_and_stops_the_head(tmp_path, monkeypatch):
    run = 'if [ "$WORKBENCH_NODE_RANK" = 1 ]; then sleep 1; echo boom; exit 5; fi\necho head works; sleep 120\n'
    spec = _spec(tmp_path, run)
    with MotoCluster.create(tmp_path, monkeypatch) as mc:
        nodes = mc.launch(spec)
        job = ClusterJob(mc.accounts, nodes, spec, quick_options(), on_event=Events())
        code = job.run()
        lid = nodes[0].launch_id
        assert code == 5
        assert "node 1 failed (exit 5)" in mc.accounts.store.get_launch(lid).error
        head_dir = mc.remote_dir(0) / "jobs" / lid
        assert (head_dir / "exit_code").read_text().strip() == "143"  # stopped, not finished
        assert "[workbench] stopped: node 1 failed (exit 5)" in paths.node_log(lid, 0).read_text()
        assert mc.aws_state() == {"instances": [], "groups": [], "keys": [], "placement": []}


def test_a_node_killed_mid_run_fails_the_launch_and_leaves_nothing_in_moto(tmp_path, monkeypatch):
    spec = _spec(tmp_path, 'echo "node $WORKBENCH_NODE_RANK up"; sleep 120\n', nodes=3)
    with MotoCluster.create(tmp_path, monkeypatch) as mc:
        nodes = mc.launch(spec)
        lid = nodes[0].launch_id
        events = Events()
        opts = quick_options(reconnect_deadline_s=60)
        job = ClusterJob(mc.accounts, nodes, spec, opts, on_event=events)
        result: dict = {}
        t = threading.Thread(target=lambda: result.setdefault("code", job.run()), daemon=True)
        t.start()
        wait_until(lambda: all(paths.node_log(lid, r).exists() and "up" in paths.node_log(lid, r).read_text()
                               for r in range(3)), 60, "all three nodes running")
        # node 2's machine vanishes: its sshd and job die, and the cloud says it is terminated
        mc.servers[2].stop()
        assert mc.kill_jobs(2) == 1
        mc.ec2().terminate_instances(InstanceIds=[nodes[2].instance_id])
        t.join(90)
        assert not t.is_alive()
        assert result["code"] == 1
        assert "node 2 was lost" in mc.accounts.store.get_launch(lid).error
        for rank in (0, 1):
            assert (mc.remote_dir(rank) / "jobs" / lid / "exit_code").read_text().strip() == "143"
        assert mc.aws_state() == {"instances": [], "groups": [], "keys": [], "placement": []}
        assert any(e.kind == "error" and "node 2 was lost" in e.message for e in events.items)


def test_a_failed_setup_on_a_worker_starts_run_nowhere(tmp_path, monkeypatch):
    setup = '[ "$WORKBENCH_NODE_RANK" = 1 ] && { echo "no data here"; exit 4; }; echo prepared\n'
    spec = _spec(tmp_path, "echo RUN-STARTED\n", setup=setup)
    with MotoCluster.create(tmp_path, monkeypatch) as mc:
        nodes = mc.launch(spec)
        code = ClusterJob(mc.accounts, nodes, spec, quick_options(), on_event=Events()).run()
        lid = nodes[0].launch_id
        logs = [paths.node_log(lid, r).read_text() for r in (0, 1)]
        assert code == 4, logs
        assert "node 1 failed (exit 4)" in mc.accounts.store.get_launch(lid).error
        assert "node 0: node 1 failed before run; run is not started anywhere" in logs[0]
        assert "RUN-STARTED" not in logs[0] + logs[1]
        assert mc.aws_state() == {"instances": [], "groups": [], "keys": [], "placement": []}
