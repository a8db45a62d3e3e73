"""A remote job end to end over the real sshd: upload, supervised run, logs, exit code, on_finish."""

from __future__ import annotations

import json

from .helpers import Events, job, launch, make_spec

from workbench.core import paths
from workbench.core.models import InstanceState
from workbench.core.remote.job import read_state, recorded_exit_code


def _provider_state(remote) -> dict:
    return json.loads((remote.data_dir / "sshcloud" / "loop.json").read_text())


def test_job_prints_and_exits_3_then_terminate_tears_down(remote, tmp_path):
    spec = make_spec(tmp_path, "python3 train.py", setup="echo setting-up > setup-ran.txt",
                     files={"train.py": "import os\nprint('epoch', 1)\nprint('epoch', 2)\n"
                                        "print('lr', os.environ['LR'], 'gpus', os.environ['NPROC_PER_NODE'])\n"
                                        "print(open('setup-ran.txt').read().strip())\n"
                                        "raise SystemExit(3)\n"},
                     env={"LR": "0.001"}, outputs=["setup-ran.txt"])
    inst = launch(remote.accounts, spec)
    events = Events()
    code = job(remote.accounts, inst, spec, events).run()

    assert code == 3
    text = paths.job_log(inst.launch_id).read_text()
    assert text == "epoch 1\nepoch 2\nlr 0.001 gpus 1\nsetting-up\n"
    assert recorded_exit_code(inst.launch_id) == 3
    assert [e.data["exit_code"] for e in events.of("exit")] == [3]
    phases = events.phases()
    for p in ("connecting", "uploading", "starting", "running", "finished", "downloading", "terminating", "done"):
        assert p in phases, (p, phases)
    assert phases.index("uploading") < phases.index("running") < phases.index("terminating")
    # on_finish terminate went through core teardown to the provider, and was verified
    rec = _provider_state(remote)["instances"][inst.instance_id]
    assert rec["state"] == "terminated" and rec["history"] == ["terminated"]
    assert remote.accounts.store.find_launch(inst.launch_id).status == "terminated"
    assert all(i.state == InstanceState.TERMINATED for i in remote.accounts.store.list_instances(inst.launch_id))
    # the outputs were downloaded before the teardown
    assert (paths.job_dir(inst.launch_id) / "outputs" / "setup-ran.txt").read_text() == "setting-up\n"
    assert read_state(inst.launch_id)["phase"] == "done"
    assert read_state(inst.launch_id)["exit_code"] == 3
