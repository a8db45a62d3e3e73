"""When the controller fails: killed in the middle of a relaunch (the next start finishes it and nothing is left
billing), its machine gone (the app notices on open and takes over, through the board's claims).

The controller here is the real ``workbench controller serve`` in a process of its own, with a store of its
own, on the file-backed fake cloud both installations share (``state_dir``), the board in a folder
(``controller_board``, as when rehearsing on one computer); the kill is a real SIGKILL at a named point of
the launch (``WORKBENCH_CRASH_AT``)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from workbench_testing import FIXTURE_PLUGINS, ROOT, fake_cloud_accounts

from workbench.core import paths
from workbench.core.controller import handover
from workbench.core.controller.away import app_claims, catch_up
from workbench.core.controller.claims import claim_key
from workbench.core.controller.service import ControllerConfig
from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import choose_offer, execute
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.lifecycle.recovery import RecoveryEngine

SPEC = """name: train
run: python3 train.py
resources: {gpu: V100:1, spot: true}
providers: [fakecloud]
regions: [fake-east]
guards: {max_runtime: 2h}
recovery: {max_restarts: 3, on: [preemption, failure]}
"""


@pytest.fixture
def world(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "app"))
    settings = {"state_dir": str(tmp_path / "cloud"), "controller_board": str(tmp_path / "board")}
    acc, _ = fake_cloud_accounts(monkeypatch, {"fc": settings})
    (first,) = execute(acc, choose_offer(acc, parse_spec(SPEC, source="t.yaml"), provider="fakecloud"))
    board = handover.board_of(acc, "fc")
    handover.hand_over(acc.store, board, first.launch_id)
    prof = acc.profile("fc")
    config = ControllerConfig(launch_id="workbench-controller-0001", install_id=paths.install_id(), poll_s=1,
                              idle_end_s=600, profile={"name": prof.name, "provider": prof.provider,
                                                       "region": prof.region, "settings": dict(prof.settings)},
                              extra={"identity": {"account": "a"}})  # the fake cloud's (non-secret) account name
    path = tmp_path / "controller.json"
    config.save(path)
    yield acc, board, first, path, tmp_path
    acc.store.close()


def serve(path, home, crash: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "WORKBENCH_HOME": str(home), "PYTHONPATH": f"{FIXTURE_PLUGINS}{os.pathsep}{ROOT}"}
    env.pop("WORKBENCH_CRASH_AT", None)
    if crash:
        env["WORKBENCH_CRASH_AT"] = crash
    return subprocess.run([sys.executable, "-m", "workbench", "controller", "serve", "--once", "--config", str(path)],
                          env=env, capture_output=True, text=True, timeout=120)


def take_back(acc, launch_id: str) -> None:
    prov = acc.provider(acc.profile("fc"))
    with prov._state() as st:
        for raw in st["instances"].values():
            if raw.get("launch_id") == launch_id:
                raw["state"] = "terminated"
    reconcile(acc)


def billable(acc) -> set[str]:
    reconcile(acc)
    return {i.launch_id for i in acc.store.list_instances() if i.state.billable}


def test_a_controller_killed_mid_relaunch_finishes_it_at_its_next_start(world):
    acc, board, first, path, tmp = world
    take_back(acc, first.launch_id)
    killed = serve(path, tmp / "controller", crash="launch:provider-returned")
    assert killed.returncode == -9, killed.stderr[-2000:]
    claim = board.get(claim_key(first.launch_id, 2))[0]
    half = claim["launch_id"]
    assert claim["state"] == "claimed" and half and billable(acc) == {half}  # its machine bills, unrecorded

    again = serve(path, tmp / "controller")
    assert again.returncode == 0, again.stderr[-2000:]
    claim = board.get(claim_key(first.launch_id, 2))[0]
    assert claim["state"] == "launched" and claim["launch_id"] != half
    assert billable(acc) == {claim["launch_id"]}  # the half-made attempt is gone; exactly one runs


def test_a_controller_whose_machine_is_gone_is_noticed_and_the_app_takes_over(world):
    acc, board, first, path, tmp = world
    assert serve(path, tmp / "controller").returncode == 0  # it polled once, then its machine was taken away
    beat = board.get("controller.json")[0]
    later = float(beat["ts"]) + 600
    (away,) = catch_up(acc, now=later)
    assert not away.reachable and away.took_over
    (fresh,) = catch_up(acc, now=float(beat["ts"]) + 1)
    assert fresh.reachable and not fresh.took_over

    take_back(acc, first.launch_id)
    engine = RecoveryEngine(acc, clock=lambda: later, teardown_timeout_s=5, teardown_poll_s=0.01,
                            claims=app_claims(acc, clock=lambda: later))
    (ev,) = [e for e in engine.poll() if e.action == "relaunched"]
    claim = board.get(claim_key(first.launch_id, 2))[0]
    assert claim["owner"].startswith("app:") and claim["launch_id"] == ev.launch_id
    # a controller that comes back reads the claim and never relaunches attempt 2 again
    assert serve(path, tmp / "controller").returncode == 0
    assert billable(acc) == {ev.launch_id}
