"""The controller end to end on AWS (moto server, moto S3) with real sshd "machines", the controller being one
of them and running the shipped workbench (the app's own wheel, installed from a wheelhouse into a fresh
virtual environment, started by the job runner as on a cloud machine, with the instance role's credentials
from a metadata service: never the app's key).

The app launches a spot job with recovery and a ``sync`` mount, creates the account's controller, hands the job
over and stops doing anything.  AWS then takes the job's machine back (Server.SpotInstanceTermination); the
controller relaunches it, the job resumes from its checkpoint and finishes, the controller tears it down and,
with nothing left to watch, ends itself through the instance guard's path.  The app, reopened, shows the
attempts and their cost; moto holds nothing billable; no file of the machines holds the app's key."""

from __future__ import annotations

import time

import boto3
import pytest
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ec2.models import ec2_backends
from moto.ec2.models.instances import StateReason

from imds import InstanceMetadata
from sshd import Sshd
from webhook_server import WebhookServer
from workbench_testing import ROOT

from .conftest import KEY_ID, SECRET

from workbench.core import paths
from workbench.core.controller import deploy, handover
from workbench.core.controller.away import catch_up
from workbench.core.controller.board import Board
from workbench.core.controller.claims import claim_key
from workbench.core.domain.jobspec import parse_spec
from workbench.core.domain.models import Profile
from workbench.core.lifecycle.launcher import choose_offer, execute
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.lifecycle.recovery import history
from workbench.core.notify import settings as notify_settings
from workbench.core.notify.channel import ChannelConfig, ChannelSecrets
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.registry import discover
from workbench.core.providers.sshkeys import ensure_keypair
from workbench.core.store.database import Store
from workbench.core.remote.job import RemoteJob
from workbench.core.remote.job_state import JobOptions

POLL_S = 2.0
FAST = {"ssh_cidr": "198.51.100.23/32", "poll_s": "0.01", "terminate_wait_s": "10", "connect_timeout": "2",
        "read_timeout": "20", "retry_backoff_cap_s": "0.02", "pricing": "snapshot"}


def wait_for(cond, timeout: float, what: str, every: float = 0.2, why=lambda: ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}{why()}")


def machine_ends(instance_id: str, region: str, reason: str, code: str) -> None:
    """What EC2 does to an instance it ends (a spot reclaim; a shutdown with behaviour terminate)."""
    backend = ec2_backends[DEFAULT_ACCOUNT_ID][region]
    inst = backend.get_instance(instance_id)
    backend.terminate_instances([instance_id])
    inst.state_reason = StateReason(f"{code}: {reason}", code)


@pytest.mark.timeout(600)
def test_the_controller_relaunches_a_spot_job_while_the_app_is_closed(tmp_path, moto_stack, app_accounts,
                                                                     wheelhouse):
    acc, creds = app_accounts
    admin = dict(region_name="us-east-1", endpoint_url=moto_stack.url, aws_access_key_id=KEY_ID,
                 aws_secret_access_key=SECRET)
    boto3.client("s3", **admin).create_bucket(Bucket="runs")
    creds.set("aws", "moto", {"access_key_id": KEY_ID, "secret_access_key": SECRET})
    profile_settings = {**FAST, "storage_uri": "s3://runs/wb", "regions": "us-east-1"}
    acc.save_profile(Profile("moto", "aws", "us-east-1", endpoint_url=moto_stack.url, settings=profile_settings))

    # the controller's identity, made by the app (the user said yes once); EC2 hands its role's
    # credentials to the machine through the metadata service
    prov = acc.provider(acc.profile("moto"))
    ident = prov.controller_identity(create=True)
    assert ident.ready, ident
    role_arn = f"arn:aws:iam::{DEFAULT_ACCOUNT_ID}:role/{ident.name}"
    sts = boto3.client("sts", **admin)
    imds = InstanceMetadata(ident.name, lambda: sts.assume_role(RoleArn=role_arn, RoleSessionName="i-controller",
                                                               DurationSeconds=3600)["Credentials"])
    server = Sshd.start(tmp_path / "machines", env={"AWS_EC2_METADATA_SERVICE_ENDPOINT": imds.url})
    hook = WebhookServer()
    try:
        _run(tmp_path, acc, server, admin, wheelhouse, hook)
    finally:
        server.end_jobs()
        server.stop()
        imds.stop()
        hook.close()


def _run(tmp_path, acc, server, admin, wheelhouse, hook) -> None:
    address = f"{server.user}@127.0.0.1:{server.port}"
    prof = acc.profile("moto")
    acc.save_profile(Profile(prof.name, prof.provider, prof.region, endpoint_url=prof.endpoint_url,
                             settings={**prof.settings, "ssh_address": address}))
    prof = acc.profile("moto")
    server.authorize(ensure_keypair(acc.store.path.parent).public_openssh)
    s3 = boto3.client("s3", **admin)

    # the profile tells the user while away (a generic JSON webhook; its URL, a secret, in the credential store)
    notify_settings.save(acc, "moto", ChannelConfig(channel="webhook", format="json"),
                         ChannelSecrets(webhook_url=hook.url()))
    prof = acc.profile("moto")

    # 1. the account's controller: the cheapest small machine, the app's own wheel
    started = time.time()
    res = deploy.up(acc, prof, wheelhouse=wheelhouse, poll_s=POLL_S, idle_end_s=20, finish_grace_s=1, renew_s=4,
                    notify=lambda path: notify_settings.write_controller_file(acc, "moto", path))
    (ctl,) = res.instances
    assert ctl.instance_type == "t3a.nano" and not ctl.spot
    assert deploy.start(acc, res, grace_s=1)
    ctl_dir = server.remote_dir / "jobs" / res.launch_id
    beat = wait_for(lambda: deploy.wait_for_heartbeat(acc, prof, res.launch_id, started, 2.0, poll=0.5), 240,
                    "the controller's first heartbeat", why=lambda: _tail(ctl_dir / "output.log"))
    assert beat["version"] and beat["poll_s"] == POLL_S
    board = Board.of_profile(acc, prof, paths.install_id())

    # 2. the app launches a spot job with recovery and a sync mount, and starts it
    work = tmp_path / "work"
    work.mkdir()
    (work / "train.py").write_text((ROOT / "resources" / "examples" / "spot-resume" / "train.py").read_text())
    spec = parse_spec(f"""name: resume
run: python3 train.py
workdir: {work}
resources: {{gpu: 'V100:1', spot: true}}
providers: [aws]
regions: [us-east-1]
env: {{STEPS: 40, STEP_SECONDS: 0.4}}
storage:
  - {{path: checkpoints, source: s3://runs/ckpt, mode: sync, interval: 1s}}
recovery: {{max_restarts: 2, on: [preemption]}}
guards: {{max_runtime: 2h}}
""", source=str(tmp_path / "spec.yaml"))
    (first,) = execute(acc, choose_offer(acc, spec, provider="aws"))
    assert first.spot and first.host == "127.0.0.1"
    opts = JobOptions(connect_deadline_s=30, key_grace_s=5, reconnect_deadline_s=30, poll_s=0.1, grace_s=600)
    assert RemoteJob(acc, first, spec, opts).launch()

    # 3. the app hands the job over and goes away (nothing of it runs from here on)
    handover.hand_over(acc.store, board, first.launch_id, ensure_keypair(acc.store.path.parent).public_openssh)
    store_path, creds = acc.store.path, acc.credentials
    acc.store.close()  # the app closes: nothing of it runs from here on (the board object is only the test's eyes)
    wait_for(lambda: first.launch_id in ((board.get("controller.json") or ({}, ""))[0].get("handed") or []), 30,
             "the controller taking the launch in")

    def checkpoints() -> list[str]:
        return [o["Key"] for o in s3.list_objects_v2(Bucket="runs", Prefix="ckpt/").get("Contents", [])]

    wait_for(lambda: len(checkpoints()) >= 5, 90, "five checkpoints in the bucket")
    saved = len(checkpoints())

    # 4. AWS takes the spot machine back, without a notice
    taken = time.time()
    machine_ends(first.instance_id, "us-east-1", "Spot instance termination", "Server.SpotInstanceTermination")
    server.end_jobs(first.launch_id)
    claim = wait_for(lambda: (board.get(claim_key(first.launch_id, 2)) or (None,))[0], 60,
                     "the controller claiming attempt 2", why=lambda: _tail(ctl_dir / "output.log"))
    decided = float(claim["ts"]) - taken
    assert claim["owner"] == f"controller:{res.launch_id}"
    took = float(board.get("controller.json")[0]["poll_took_s"])  # one poll's own work, on this loaded machine
    assert decided <= 2 * (POLL_S + took) + 0.5, f"claimed {decided:.1f} s after the reclaim (a poll took {took} s)"

    # the controller's own key goes on the machine it launches (cloud-init's step on a real cloud)
    def authorize_controller_keys() -> bool:
        for pub in (server.home / ".workbench-controller").rglob("*.pub"):
            server.authorize(pub.read_text().strip())
        return True

    done = wait_for(lambda: authorize_controller_keys() and (board.get(claim_key(first.launch_id, 2)) or ({},))[0]
                    .get("state") == "launched" and _attempt_done(server, board, first.launch_id), 240,
                    "attempt 2 running to its end", why=lambda: _tail(ctl_dir / "output.log"))
    second = done
    log2 = (server.remote_dir / "jobs" / second / "output.log").read_text()
    resumed = int(log2.split("resumed from checkpoint step ")[1].split()[0])
    assert resumed >= saved - 1 and "done: 40 steps" in log2
    # its storage credentials (one hour at most: a role's chained session) were renewed while it ran, and the
    # syncs after the renewal went through with them
    assert "storage credentials renewed" in log2
    after = log2.split("storage credentials renewed", 1)[1]
    assert "save checkpoints -> s3://runs/ckpt done" in after
    steps = sorted(int(k.split("step-")[1].split(".")[0]) for k in checkpoints() if "step-" in k)
    assert steps == list(range(1, 41))  # every step ran, and the run went on from the checkpoint

    # 5. the controller tears the finished attempt down, then, idle, ends itself (its job exits 0 and the
    # machine's on_finish runs the end-bill command: on AWS a shutdown, which terminates the instance)
    wait_for(lambda: (ctl_dir / "self_stopped").exists(), 120, "the controller ending itself",
             why=lambda: _tail(ctl_dir / "output.log"))
    assert (ctl_dir / "self_stopped").read_text().strip() == "terminate"
    machine_ends(ctl.instance_id, "us-east-1", "Client.InstanceInitiatedShutdown", "Client.InstanceInitiatedShutdown")

    # told while away: relaunched, then finished; the channel's secret only in the machine's 0600 file
    events = wait_for(lambda: {h.json.get("event") for h in list(hook.requests)} >= {"relaunched", "finished"} and
                      [h.json for h in list(hook.requests)], 30, "the webhook told of the relaunch and the finish")
    assert all(e["profile"] == "moto" for e in events)
    secret_file = ctl_dir / "work" / "notify.json"
    assert oct(secret_file.stat().st_mode & 0o777) == "0o600" and hook.url() in secret_file.read_text()
    assert hook.url() not in (ctl_dir / "work" / "controller.json").read_text()

    # 6. the app, reopened (a new store connection, new providers), reads what happened while it was away
    acc = Accounts(Store.open(store_path), entries=discover(), credentials=creds)
    (away,) = catch_up(acc)
    actions = [e.get("action") for e in away.events]
    assert "relaunched" in actions and "idle_end" in actions
    reconcile(acc)
    rows = history(acc.store, first.launch_id)
    assert [r["attempt"] for r in rows] == [1, 2] and rows[1]["launch_id"] == second
    assert rows[0]["end_reason"] == "preemption" and all(float(r["cost"]) > 0 for r in rows)
    live = [i for i in acc.provider(prof).instances() if i.state.billable]
    assert live == []
    # the log of the attempt the controller started is readable here as the app's own (`workbench logs`)
    assert "resumed from checkpoint step" in paths.job_log(second).read_text()

    # 7. the app's long-term key is on no machine: every file the machines hold
    leaked = [p for p in tmp_path.joinpath("machines").rglob("*") if p.is_file() and not p.is_symlink()
              and (KEY_ID.encode() in p.read_bytes() or SECRET.encode() in p.read_bytes())]
    assert leaked == []
    acc.store.close()
    print(f"\ncontroller: decided {decided:.1f} s after the reclaim (poll {POLL_S:g} s); "
          f"resumed at step {resumed} of 40 after {saved} saved")


def _attempt_done(server, board, root_id: str) -> str | None:
    got = board.get(claim_key(root_id, 2))
    lid = got[0].get("launch_id") if got else None
    if not lid:
        return None
    code = server.remote_dir / "jobs" / lid / "exit_code"
    return lid if code.exists() and code.read_text().strip() == "0" else None


def _tail(path) -> str:
    try:
        return "\n--- " + str(path) + " ---\n" + "\n".join(path.read_text().splitlines()[-40:])
    except OSError:
        return f" ({path} not there)"
