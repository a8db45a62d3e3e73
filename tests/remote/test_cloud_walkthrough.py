"""The issue's walkthrough: the 1×V100 example launched into AWS (moto), its code uploaded over a real
sshd, the log and the GPU readings (fake nvidia-smi) streamed back, and the machine released when the
job ends — verified in moto.

moto's machines have no SSH, so the profile's ``ssh_address`` setting (a real feature: a port forward
or bastion) points at the test sshd; everything else is the real path: AWS plugin → launcher → remote
job → on_finish terminate → core teardown → EC2 in moto.  The example's MNIST setup needs the
internet, so its setup/run are replaced by a tiny script; offer, guards and on_finish are the example's.
"""

from __future__ import annotations

import dataclasses
import importlib

import boto3

import aws_moto
from workbench_testing import ROOT, fake_cloud_accounts

from .helpers import Events, quick_options, wait_until

from workbench.core import paths
from workbench.core.domain.jobspec import load_spec
from workbench.core.lifecycle.launcher import execute, choose_offer
from workbench.core.domain.models import InstanceState, Profile
from workbench.core.remote.gpustream import GpuStream
from workbench.core.remote.job import RemoteJob, recorded_exit_code
from workbench.core.providers.sshkeys import ensure_keypair
from workbench.core.telemetry.hub import TelemetryHub

SETTINGS = {"ssh_cidr": "198.51.100.23/32", "poll_s": "0.01", "terminate_wait_s": "10", "connect_timeout": "2",
            "read_timeout": "20", "retry_backoff_cap_s": "0.02", "pricing": "snapshot"}


def test_v100_example_into_moto_uploads_runs_streams_and_is_released(tmp_path, monkeypatch, sshd_server):
    stack = aws_moto.start()
    stack.reset()
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    acc, creds = fake_cloud_accounts(monkeypatch)
    importlib.invalidate_caches()
    address = f"{sshd_server.user}@127.0.0.1:{sshd_server.port}"
    acc.save_profile(Profile("moto", "aws", "us-east-1", endpoint_url=stack.url,
                             settings={**SETTINGS, "ssh_address": address}))
    creds.set("aws", "moto", {"access_key_id": "AKIAWORKBENCHTEST01", "secret_access_key": "not-a-real-secret"})
    sshd_server.authorize(ensure_keypair(acc.store.path.parent).public_openssh)
    sshd_server.set_gpu("v100x1", 50)
    try:
        example = load_spec(ROOT / "resources" / "examples" / "v100-single.yaml")
        work = tmp_path / "work"
        work.mkdir()
        (work / "train.py").write_text("import os\nfor e in range(1, int(os.environ['EPOCHS']) + 1):\n"
                                       "    print('epoch', e)\nopen('model.pt', 'w').write('weights')\n")
        spec = dataclasses.replace(example, setup="echo prepared", run="python3 train.py", workdir=str(work),
                                   env={**example.env, "EPOCHS": "3"}, outputs=("model.pt",))
        lp = choose_offer(acc, spec, provider="aws")
        assert lp.choice.offer.instance_type == "p3.2xlarge" and lp.choice.offer.gpu_model == "V100"
        (inst,) = execute(acc, lp)
        assert inst.host == "127.0.0.1" and inst.extra["ssh_port"] == sshd_server.port

        hub = TelemetryHub(acc.store)
        stream = GpuStream(hub, inst, acc.store.path.parent, period_ms=50, backoff_cap=0.2)
        stream.start()
        try:
            wait_until(lambda: [s for s in hub.since(stream.iid) if s.kind == "gpu"], 15, "V100 readings")
            assert all("V100" in s.name for s in hub.since(stream.iid) if s.kind == "gpu")
        finally:
            stream.stop()

        events = Events()
        code = RemoteJob(acc, inst, spec, quick_options(), on_event=events).run()
        assert code == 0 and recorded_exit_code(inst.launch_id) == 0
        assert "uploading" in events.phases() and "done" in events.phases()
        assert paths.job_log(inst.launch_id).read_text() == "prepared\nepoch 1\nepoch 2\nepoch 3\n"
        assert (paths.job_dir(inst.launch_id) / "outputs" / "model.pt").read_text() == "weights"

        ec2 = boto3.client("ec2", region_name="us-east-1", endpoint_url=stack.url,
                           aws_access_key_id="AKIAWORKBENCHTEST01", aws_secret_access_key="x")
        states = {i["InstanceId"]: i["State"]["Name"]
                  for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]}
        assert states and set(states.values()) == {"terminated"}
        assert all(i.state == InstanceState.TERMINATED for i in acc.store.list_instances(inst.launch_id))
    finally:
        # moto's terminate cannot reach the sshd standing in for the machine: end the job there as the
        # vanished VM would (its own on_finish.sh waits out the hold the app set, 15 min)
        sshd_server.end_jobs()
        acc.store.close()
        stack.reset()
