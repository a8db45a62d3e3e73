"""A secret given at launch reaches the job on a (real sshd) machine, and nothing on this computer keeps it."""

from __future__ import annotations

import dataclasses
import stat

from .helpers import Events, job, make_spec

from workbench.core import paths
from workbench.core.lifecycle import launch_secrets
from workbench.core.lifecycle.launcher import execute, choose_offer

SECRET = "tok-remote-7c41d0"


def test_the_secret_given_at_launch_reaches_the_remote_job_only(remote, tmp_path):
    spec = make_spec(tmp_path, 'echo "token of ${#HF_TOKEN} characters"; case "$HF_TOKEN" in tok-*) echo prefix-ok;; esac')
    spec = dataclasses.replace(spec, secrets=("HF_TOKEN",))
    lp = choose_offer(remote.accounts, spec, provider="sshcloud")
    (inst,) = execute(remote.accounts, lp, secret_env={"HF_TOKEN": SECRET})
    code = job(remote.accounts, inst, spec, Events()).run()  # finds the value in this process's memory
    assert code == 0
    assert paths.job_log(inst.launch_id).read_text() == f"token of {len(SECRET)} characters\nprefix-ok\n"
    for path in remote.home.rglob("*"):  # the store, the log, the job's state on this computer
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    env_sh = remote.server.remote_dir / "jobs" / inst.launch_id / "env.sh"
    assert stat.S_IMODE(env_sh.stat().st_mode) == 0o600  # on the machine: the job's user's only
    assert stat.S_IMODE(env_sh.parent.stat().st_mode) == 0o700  # and so is the job's folder (issue 30)
    launch_secrets.forget(inst.launch_id)
