"""The on-machine guard of a multi-node launch acts on the whole launch.

Each "machine" is the guard run for real (a Python process) with fake nvidia-smi, shutdown and
sudo on its PATH (guardsim.py); the launch's SSH to the other nodes is a fake ``ssh`` that answers
a peer's guard state from a file and records what it was asked to run.
"""

from __future__ import annotations

import json

from guardsim import LID, T0, Machine

FAKE_SSH = """#!/bin/sh
# ssh -F CONFIG -o ConnectTimeout=10 ADDRESS COMMAND: record, then answer like the peer would
for last; do :; done
addr=$(eval echo \\${$(($# - 1))})
echo "$addr $last" >> "$GPU_DIR/ssh.calls"
case "$last" in
  *--end-bill*) exit 0 ;;
  *cat*) [ -f "$GPU_DIR/peer-$addr.json" ] || exit 255; cat "$GPU_DIR/peer-$addr.json" ;;
esac
"""
PEERS = ["10.0.0.4", "10.0.0.5"]


def _cluster(machine: Machine, rank: int) -> None:
    folder = machine.job / "cluster"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "peers").write_text("".join(a + "\n" for a in PEERS))
    (folder / "rank").write_text(f"{rank}\n")
    (folder / "ssh_config").write_text("# the launch's\n")
    ssh = machine.root / "bin" / "ssh"
    ssh.write_text(FAKE_SSH)
    ssh.chmod(0o755)


def _peer(machine: Machine, address: str, **state) -> None:
    (machine.root / "gpu" / f"peer-{address}.json").write_text(json.dumps(state))


def _ssh_calls(machine: Machine) -> list[str]:
    f = machine.root / "gpu" / "ssh.calls"
    return f.read_text().splitlines() if f.exists() else []


def test_a_worker_that_finished_early_does_not_end_itself(machine: Machine):
    _cluster(machine, rank=1)
    machine.finish(0)
    machine.run(T0)
    machine.run(T0 + 3000)  # far past the finish grace
    assert machine.shutdowns == [] and _ssh_calls(machine) == []


def test_the_head_ends_every_node_when_the_job_finished(machine: Machine):
    _cluster(machine, rank=0)
    machine.finish(0)
    machine.run(T0)
    machine.run(T0 + 300)
    assert machine.shutdowns == ["-h now"]
    (call,) = _ssh_calls(machine)
    assert call.startswith("10.0.0.5 sudo -n ") and call.endswith("--end-bill terminate --only-here")
    assert "asked node 1 (10.0.0.5) to end its bill: ok" in machine.console


def test_idle_means_every_node_idle(machine: Machine):
    _cluster(machine, rank=1)
    machine.gpus(0, 0)
    machine.run(T0)
    _peer(machine, "10.0.0.4", gpu_state="busy")
    machine.run(T0 + 700)
    assert machine.shutdowns == [] and "node 0 (10.0.0.4) is busy: the launch is not idle" in machine.console
    _peer(machine, "10.0.0.4", gpu_state="idle", idle_since=T0 + 500)  # idle, but not for 10 minutes yet
    machine.run(T0 + 800)
    assert machine.shutdowns == []
    (machine.root / "gpu" / "peer-10.0.0.4.json").unlink()  # a peer that does not answer is not idle
    machine.run(T0 + 1200)
    assert machine.shutdowns == []
    _peer(machine, "10.0.0.4", gpu_state="idle", idle_since=T0 + 500)
    machine.run(T0 + 1200)
    assert machine.shutdowns == ["-h now"] and "every GPU below 5 %" in machine.console
    assert _ssh_calls(machine)[-1].startswith("10.0.0.4 ") and "--end-bill terminate --only-here" in \
        _ssh_calls(machine)[-1]


def test_an_end_bill_from_a_peer_ends_only_this_node(machine: Machine):
    _cluster(machine, rank=1)
    r = machine.run(T0, "--end-bill", "terminate", "--only-here")
    assert r.rc == 0 and machine.shutdowns == ["-h now"] and _ssh_calls(machine) == []
    assert "requested by another node of the launch" in machine.console


def test_the_job_s_own_end_bill_on_the_head_ends_the_launch(machine: Machine):
    _cluster(machine, rank=0)
    r = machine.run(T0, "--end-bill", "terminate")
    assert r.rc == 0 and machine.shutdowns == ["-h now"]
    assert [c.split()[0] for c in _ssh_calls(machine)] == ["10.0.0.5"]
    assert LID  # the job folder of this launch holds the cluster files
