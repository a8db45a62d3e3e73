"""The CLI on a multi-node cloud launch, as a user runs it: `launch` prepares every node (the AWS plugin into
moto, each node a real sshd at its private address), `logs --follow` prints every node's lines by rank,
records the head's exit and tears the whole launch down."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from cluster_nodes import MotoCluster

pytestmark = pytest.mark.timeout(300)


def _wb(home, *args: str, timeout: float = 200, **kw):
    env = dict(os.environ, WORKBENCH_HOME=str(home), AWS_ACCESS_KEY_ID="AKIAWORKBENCHTEST01",
               AWS_SECRET_ACCESS_KEY="not-a-real-secret")
    return subprocess.Popen([sys.executable, "-m", "workbench", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, **kw)


def test_launch_and_follow_two_cloud_nodes_from_the_cli(tmp_path, monkeypatch):
    with MotoCluster.create(tmp_path, monkeypatch) as mc:
        home = tmp_path / "home"
        work = tmp_path / "work"
        work.mkdir()
        spec = tmp_path / "ddp.yaml"
        spec.write_text(f"name: cli-nodes\nnum_nodes: 2\nworkdir: {work}\nresources:\n  gpu: V100:1\n"
                        "run: |\n  echo \"hello from node $WORKBENCH_NODE_RANK of $WORKBENCH_NUM_NODES\"\n"
                        "  [ \"$WORKBENCH_NODE_RANK\" = 0 ] && exit 3; exit 0\n")
        launch = _wb(home, "launch", str(spec), "--provider", "aws", "--profile", "moto", "--yes", "--json")
        deadline = time.monotonic() + 120
        while len(mc.aws_state()["instances"]) < 2:  # the machines exist: their sshd "boots" now
            assert launch.poll() is None, launch.communicate()
            assert time.monotonic() < deadline, "the launch made no machines"
            time.sleep(0.2)
        nodes = sorted(mc.accounts.provider(mc.accounts.profile("moto")).instances(),
                       key=lambda i: i.extra["node_rank"])
        mc.start_nodes(nodes)
        out, err = launch.communicate(timeout=200)
        assert launch.returncode == 0, err
        data = json.loads(out)
        lid = data["launch"]["launch_id"]
        assert data["launch"]["num_nodes"] == 2 and len(data["instances"]) == 2
        assert "the job runs on 2 machines" in err and f"ssh {lid}-node1" in err

        follow = _wb(home, "logs", lid, "--follow")
        out, err = follow.communicate(timeout=200)
        assert follow.returncode == 0, err
        assert "[node 0] hello from node 0 of 2\n" in out and "[node 1] hello from node 1 of 2\n" in out
        assert "exit code: 3" in err  # the head's exit is the job's
        one = _wb(home, "logs", lid, "--node", "1").communicate(timeout=60)[0]
        assert one.endswith("starting run\nhello from node 1 of 2\n") and "[node" not in one
        assert mc.aws_state() == {"instances": [], "groups": [], "keys": [], "placement": []}


def test_launch_detach_starts_every_node_in_the_background_with_the_secret(tmp_path, monkeypatch):
    """`launch --detach` of 2 nodes returns once both machines exist; `workbench start` (in the background)
    prepares both nodes with the secret piped to it, and `logs --follow` attaches once it has."""
    with MotoCluster.create(tmp_path, monkeypatch) as mc:
        home = tmp_path / "home"
        spec = tmp_path / "detached.yaml"
        spec.write_text("name: cli-detached\nnum_nodes: 2\nsecrets: [HF_TOKEN]\nresources:\n  gpu: V100:1\n"
                        "run: |\n  [ \"$HF_TOKEN\" = tok-123 ] && echo \"node $WORKBENCH_NODE_RANK has the token\"\n")
        launch = _wb(home, "launch", str(spec), "--provider", "aws", "--profile", "moto", "--yes", "--json",
                     "--detach", "--env", "HF_TOKEN=tok-123")
        out, err = launch.communicate(timeout=200)
        assert launch.returncode == 0, err
        lid = json.loads(out)["launch"]["launch_id"]
        assert "detached: the 2 machines are up" in err and "tok-123" not in out + err
        nodes = sorted(mc.accounts.provider(mc.accounts.profile("moto")).instances(),
                       key=lambda i: i.extra["node_rank"])
        assert len(nodes) == 2
        mc.start_nodes(nodes)  # their sshd "boot" now: the background starter is waiting for them
        follow = _wb(home, "logs", lid, "--follow")
        out, err = follow.communicate(timeout=200)
        assert follow.returncode == 0, err
        assert "[node 0] node 0 has the token\n" in out and "[node 1] node 1 has the token\n" in out
        start_log = (home / "data" / "jobs" / lid / "start.log").read_text()
        assert "tok-123" not in start_log
        assert mc.aws_state() == {"instances": [], "groups": [], "keys": [], "placement": []}
