"""Multi-node rehearsals on this computer: N process groups, the cluster variables, the barrier, failures.

Everything here runs real processes (no torch: the distributed engines are in
tests/distributed/, part of ``make test``); the rendezvous test uses a
plain TCP exchange through WORKBENCH_MASTER_ADDR/PORT, so the variables are proved usable.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import textwrap
from pathlib import Path

import pytest

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.models import InstanceState, JobSpec, Resources, GpuRequest

from .helpers import LocalSetup, group_alive, wait_for

#: real processes, SSH and moto on a shared 2-core machine: slow under load
pytestmark = pytest.mark.timeout(120)

PY = sys.executable


def _launch(local: LocalSetup, spec: JobSpec, count: int, launch_id: str | None = None):
    provider = local.provider()
    req = dataclasses.replace(local.request(provider, spec, launch_id), count=count)
    return provider, req, provider.launch(req)


def _node_log(local: LocalSetup, launch_id: str, rank: int) -> str:
    base = local.data_dir / "jobs" / launch_id
    path = base / "output.log" if rank == 0 else base / f"node-{rank}" / "output.log"
    return path.read_text() if path.exists() else ""


def _wait_all_finished(local: LocalSetup, provider, launch_id: str, count: int, seconds: float = 20.0):
    def done():
        insts = [i for i in provider.instances() if i.launch_id == launch_id]
        if len(insts) == count and all(i.state is InstanceState.TERMINATED for i in insts):
            return sorted(insts, key=lambda i: i.extra["node_rank"])
        return None

    return wait_for(done, f"all {count} nodes of {launch_id} to finish", seconds)


def test_two_nodes_get_every_cluster_variable_and_their_own_group(local: LocalSetup) -> None:
    run = textwrap.dedent("""\
        echo "rank=$WORKBENCH_NODE_RANK n=$WORKBENCH_NUM_NODES head=$WORKBENCH_MASTER_ADDR gpus=$WORKBENCH_GPUS_PER_NODE"
        echo "sky=$SKYPILOT_NODE_RANK/$SKYPILOT_NUM_NODES/$SKYPILOT_NUM_GPUS_PER_NODE dstack=$DSTACK_NODE_RANK/$DSTACK_NODES_NUM/$DSTACK_GPUS_NUM/$DSTACK_MASTER_NODE_IP"
        echo "torch=$MASTER_ADDR:$MASTER_PORT/$NNODES/$NODE_RANK port=$WORKBENCH_MASTER_PORT"
        printf 'ips=%s|\\n' "$(echo "$WORKBENCH_NODE_IPS" | tr '\\n' ',')"
        cat "$WORKBENCH_MPI_HOSTFILE"; test "$DSTACK_MPI_HOSTFILE" = "$WORKBENCH_MPI_HOSTFILE"
        test "$SKYPILOT_NODE_IPS" = "$WORKBENCH_NODE_IPS" && test "$DSTACK_NODES_IPS" = "$WORKBENCH_NODE_IPS"
        echo "pgid=$(ps -o pgid= -p $$ | tr -d ' ') cwd=$(pwd)"
        """)
    spec = JobSpec(name="two", run=run, resources=Resources(gpu=GpuRequest(None, 2)))
    provider, req, insts = _launch(local, spec, 2)
    assert [i.instance_id for i in insts] == [f"local-{req.launch_id}", f"local-{req.launch_id}-node1"]
    assert [i.extra["node_rank"] for i in insts] == [0, 1] and {i.extra["num_nodes"] for i in insts} == {2}
    assert insts[0].extra["pgid"] != insts[1].extra["pgid"]  # one process group per node
    done = _wait_all_finished(local, provider, req.launch_id, 2)
    assert [i.exit_code for i in done] == [0, 0], [_node_log(local, req.launch_id, r) for r in (0, 1)]
    port = None
    for rank in (0, 1):
        log = _node_log(local, req.launch_id, rank)
        assert f"rank={rank} n=2 head=127.0.0.1 gpus=2" in log
        assert f"sky={rank}/2/2 dstack={rank}/2/4/127.0.0.1" in log
        assert "ips=127.0.0.1,127.0.0.1,|" in log
        assert log.count("127.0.0.1 slots=2\n") == 2
        assert f"pgid={done[rank].extra['pgid']} " in log
        assert (f"cwd={local.state_dir(req.launch_id) / 'work'}" if rank == 0 else
                f"cwd={local.state_dir(req.launch_id) / 'node-1' / 'work'}") in log
        got = log.split("port=")[1].split()[0]
        assert f"torch=127.0.0.1:{got}/2/{rank}" in log
        port = port or got
        assert got == port  # both nodes rendezvous on the same free port


def test_setup_runs_everywhere_before_run_starts_anywhere(local: LocalSetup, tmp_path: Path) -> None:
    board = tmp_path / "board"
    board.mkdir()
    # node 2's setup is slow; every run checks that every node's setup already finished
    setup = f'[ "$WORKBENCH_NODE_RANK" = 2 ] && sleep 1.5; touch {board}/setup.$WORKBENCH_NODE_RANK'
    run = f'ls {board} | sort | tr "\\n" " "; echo; test -f {board}/setup.0 -a -f {board}/setup.1 -a -f {board}/setup.2'
    provider, req, _ = _launch(local, JobSpec(name="barrier", setup=setup, run=run), 3)
    done = _wait_all_finished(local, provider, req.launch_id, 3)
    assert [i.exit_code for i in done] == [0, 0, 0]
    for rank in range(3):
        assert "setup.0 setup.1 setup.2" in _node_log(local, req.launch_id, rank)


def test_a_failed_setup_skips_run_on_every_node(local: LocalSetup) -> None:
    setup = '[ "$WORKBENCH_NODE_RANK" = 1 ] && exit 7; true'
    provider, req, _ = _launch(local, JobSpec(name="badsetup", setup=setup, run="echo RUN-STARTED"), 2)
    head, other = _wait_all_finished(local, provider, req.launch_id, 2)
    assert other.exit_code == 7 and other.extra["reason"] == "setup failed"
    assert head.exit_code == 1 and head.extra["phase"] == "barrier"
    assert "node 1 failed (exit 7) before run started" in _node_log(local, req.launch_id, 0)
    assert "RUN-STARTED" not in _node_log(local, req.launch_id, 0) + _node_log(local, req.launch_id, 1)


def test_a_failing_node_stops_the_others(local: LocalSetup) -> None:
    run = 'if [ "$WORKBENCH_NODE_RANK" = 2 ]; then sleep 0.5; exit 3; fi; echo working; sleep 60'
    provider, req, _ = _launch(local, JobSpec(name="fails", run=run), 3)
    done = _wait_all_finished(local, provider, req.launch_id, 3)
    assert [i.exit_code for i in done] == [143, 143, 3]
    assert done[0].extra["reason"] == "stopped: node 2 failed (exit 3)"
    assert done[1].extra["phase"] == "stopped"
    assert all(not group_alive(i.extra["pgid"]) for i in done)


def test_a_lost_node_stops_the_others(local: LocalSetup) -> None:
    provider, req, insts = _launch(local, JobSpec(name="lost", run="echo up; sleep 60"), 2)
    wait_for(lambda: all("up" in _node_log(local, req.launch_id, r) for r in (0, 1)), "both nodes to run")
    os.killpg(insts[1].extra["pgid"], signal.SIGKILL)  # the machine vanishes: no exit record
    head, other = _wait_all_finished(local, provider, req.launch_id, 2)
    assert other.exit_code is None and other.extra["reason"] == "killed"
    assert head.exit_code == 143 and head.extra["reason"] == "stopped: node 1 was lost"


def test_terminate_ends_every_node(local: LocalSetup) -> None:
    provider, req, insts = _launch(local, JobSpec(name="term", run="echo up; sleep 60"), 3)
    wait_for(lambda: all("up" in _node_log(local, req.launch_id, r) for r in range(3)), "every node to run")
    provider.terminate(insts[:1])  # one node: the whole launch goes (nodes of a launch go together)
    assert all(not group_alive(i.extra["pgid"]) for i in insts)
    after = [i for i in provider.instances() if i.launch_id == req.launch_id]
    assert len(after) == 3 and all(i.state is InstanceState.TERMINATED for i in after)
    assert provider.leftovers() == []


def test_nodes_rendezvous_through_the_master_address(local: LocalSetup, tmp_path: Path) -> None:
    """A sum over every node through WORKBENCH_MASTER_ADDR:PORT (plain TCP, the shape of an all_reduce)."""
    script = tmp_path / "work" / "reduce.py"
    script.parent.mkdir()
    script.write_text(textwrap.dedent("""\
        import os, socket, time
        rank, n = int(os.environ["WORKBENCH_NODE_RANK"]), int(os.environ["WORKBENCH_NUM_NODES"])
        addr, port = os.environ["WORKBENCH_MASTER_ADDR"], int(os.environ["WORKBENCH_MASTER_PORT"])
        mine = rank + 1
        if rank == 0:
            srv = socket.create_server((addr, port))
            peers = [srv.accept()[0] for _ in range(n - 1)]
            total = mine + sum(int(p.recv(16)) for p in peers)
            for p in peers:
                p.sendall(str(total).encode())
        else:
            for _ in range(200):
                try:
                    s = socket.create_connection((addr, port)); break
                except OSError:
                    time.sleep(0.05)
            s.sendall(str(mine).encode())
            total = int(s.recv(16))
        assert total == n * (n + 1) // 2
        print(f"node {rank}: sum={total} ok", flush=True)
        """))
    spec = JobSpec(name="reduce", run=f"{PY} reduce.py", workdir=str(script.parent))
    provider, req, _ = _launch(local, spec, 3)
    done = _wait_all_finished(local, provider, req.launch_id, 3)
    logs = [_node_log(local, req.launch_id, r) for r in range(3)]
    assert [i.exit_code for i in done] == [0, 0, 0], logs
    assert all(f"node {r}: sum=6 ok" in logs[r] for r in range(3))


def test_node_count_is_bounded(local: LocalSetup) -> None:
    with pytest.raises(ConfigError, match="1 to 64 nodes"):
        _launch(local, JobSpec(name="many", run="true"), 65)


def test_nodes_whose_launch_folder_is_removed_end_themselves(local: LocalSetup) -> None:
    """A home deleted under running nodes (a temporary home, a user's clean-up) must not leave their
    wrappers polling for ever: each node notices and ends its own process group."""
    import shutil

    from workbench_local.nodes import cluster_dir

    provider, req, insts = _launch(local, JobSpec(name="orphan", run="echo up; sleep 60"), 2)
    wait_for(lambda: all("up" in _node_log(local, req.launch_id, r) for r in (0, 1)), "both nodes to run")
    shutil.rmtree(cluster_dir(provider._store, req.launch_id))
    wait_for(lambda: not any(group_alive(i.extra["pgid"]) for i in insts), "every node's group to end", 20)
