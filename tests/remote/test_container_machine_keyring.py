"""A cloud job (AWS via moto, an sshd "machine" on the tests' Docker daemon) whose image logs in with the
password saved in this computer's keyring (``registry_auth.password: keyring``, issue 34): the launch reads it
from the real Secret Service and it reaches the machine's per-job login like a launch secret; it is in no log
and no file of the app's folders, and the machine's per-job Docker config is gone after the pull."""

from __future__ import annotations

import importlib

import pytest

import aws_moto
import sshd as sshd_support
from secret_service import needs_secret_service
from workbench_testing import fake_cloud_accounts

from .helpers import Events, quick_options

from workbench.core import paths
from workbench.core.domain.jobspec import parse_spec
from workbench.core.domain.models import REGISTRY_KEYRING_SECRET, Profile
from workbench.core.lifecycle import launch_secrets
from workbench.core.lifecycle.launcher import choose_offer, execute
from workbench.core.providers.credentials import CredentialStore
from workbench.core.providers.registry_logins import KEYRING_OWNER, RegistryLogins
from workbench.core.providers.sshkeys import ensure_keypair
from workbench.core.remote.job import RemoteJob

pytestmark = [needs_secret_service]
SETTINGS = {"ssh_cidr": "198.51.100.23/32", "poll_s": "0.01", "terminate_wait_s": "10", "connect_timeout": "2",
            "read_timeout": "20", "retry_backoff_cap_s": "0.02", "pricing": "snapshot"}


def test_a_cloud_job_pulls_with_the_password_saved_in_the_keyring(tmp_path, monkeypatch, world):
    why = sshd_support.available()
    if why:
        pytest.fail(f"the remote tests need a real sshd: {why}")
    machine = sshd_support.Sshd.start(tmp_path / "machine", env=world.env)
    stack = aws_moto.start()
    stack.reset()
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    acc, _ = fake_cloud_accounts(monkeypatch)
    keyring = CredentialStore()  # the session's real Secret Service, for the cloud's key and the registry's login
    acc._credentials = keyring
    importlib.invalidate_caches()
    inst = None
    try:
        acc.save_profile(Profile("moto", "aws", "us-east-1", endpoint_url=stack.url,
                                 settings={**SETTINGS, "ssh_address": f"{machine.user}@127.0.0.1:{machine.port}"}))
        keyring.set("aws", "moto", {"access_key_id": "AKIAWORKBENCHTEST01", "secret_access_key": "not-a-real-secret"})
        machine.authorize(ensure_keypair(acc.store.path.parent).public_openssh)
        RegistryLogins(keyring).save(world.registry, world.user, world.password)
        spec = parse_spec("name: boxed\nrun: 'test -f /.dockerenv && echo run-in-container'\n"
                          "resources: {gpu: 'V100:1'}\n"
                          f"image: {{name: '{world.image}', registry_auth: {{username: {world.user}, "
                          "password: keyring}}\n")
        assert spec.secrets == ()
        world.forget(world.image)
        (inst,) = execute(acc, choose_offer(acc, spec, provider="aws"))  # no secret given: the keyring's
        assert launch_secrets.values(inst.launch_id) == {REGISTRY_KEYRING_SECRET: world.password}
        code = RemoteJob(acc, inst, spec, quick_options(), on_event=Events()).run()
        log = paths.job_log(inst.launch_id).read_text()
        assert code == 0, log
        assert f"[workbench] logging in to {world.registry} as {world.user}" in log and "Login Succeeded" in log
        assert "Pull complete" in log and "run-in-container" in log
        assert world.password not in log
        job_dir = machine.remote_dir / "jobs" / inst.launch_id
        assert not (job_dir / "docker").exists()  # the per-job login is gone after the pull
        for path in (tmp_path / "home").rglob("*"):  # this computer: the store, logs, config
            if path.is_file():
                assert world.password.encode() not in path.read_bytes(), path
    finally:
        machine.end_jobs()
        machine.stop()
        if inst is not None:
            launch_secrets.forget(inst.launch_id)
        keyring.delete(KEYRING_OWNER, world.registry)
        keyring.delete("aws", "moto")
        acc.store.close()
        stack.reset()
