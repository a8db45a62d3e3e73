"""Reaching the machine: host keys (pinned, first use, changed), booting, the ssh config include."""

from __future__ import annotations

import subprocess
import threading

import pytest

import sshd as sshd_support
from workbench.core.domain.models import Profile
from workbench.core.remote import sshconfig
from workbench.core.remote.connection import NotReadyError, Target, connect
from workbench.core.remote.hostkeys import HostKeyError, KnownHosts, host_alias, known_hosts_path, parse_pins
from workbench.core.providers.sshkeys import ensure_keypair

from .helpers import Events, job, launch, make_spec, wait_until


def test_first_use_records_the_key_and_a_changed_key_is_refused(remote, tmp_path):
    spec = make_spec(tmp_path, "true", on_finish="keep")
    inst = launch(remote.accounts, spec)
    target = Target.for_instance(inst, remote.data_dir)
    with connect(target) as conn:
        assert conn.run("echo ok").out == "ok\n"
        # the test machine's sessions start in a home of their own: no startup file of this computer
        # runs (root's .bashrc here ran `pyenv init`, which can wait 60 s on a stale lock per session)
        assert conn.run('echo "$HOME"').out == f"{remote.server.home}\n"
    kh = KnownHosts(known_hosts_path(remote.data_dir))
    assert kh.lookup(target.alias) == parse_pins([remote.server.host_public_key()])
    remote.server.restart(new_host_key=True)  # the machine now shows another key
    with pytest.raises(HostKeyError) as err:
        connect(target)
    assert "has changed" in err.value.message and target.alias in err.value.hint
    # a job refuses too, with phase "error" and no retry storm
    events = Events()
    with pytest.raises(HostKeyError):
        job(remote.accounts, inst, spec, events).run()
    assert events.phases()[-1] == "error" and len([e for e in events.items if "retrying" in e.message]) == 0


def test_pinned_keys_from_the_console_output_are_the_only_ones_accepted(remote, tmp_path):
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    wrong = (other.with_suffix(".pub")).read_text()
    settings = dict(remote.profile.settings)
    remote.accounts.save_profile(Profile("pinned-wrong", "sshcloud", "loop-1", settings={**settings, "host_keys": wrong}))
    bad = launch_on(remote, "pinned-wrong", tmp_path / "a")
    with pytest.raises(HostKeyError) as err:
        connect(Target.for_instance(bad, remote.data_dir))
    assert "not one of the keys its cloud reported" in err.value.message
    console = f"ecdsa-sha2-nistp256 AAAAE2VjZHNh root@ip\n{remote.server.host_public_key()} root@ip-10-0-0-1\n"
    remote.accounts.save_profile(Profile("pinned-right", "sshcloud", "loop-1",
                                         settings={**settings, "host_keys": console}))
    good = launch_on(remote, "pinned-right", tmp_path / "b")
    with connect(Target.for_instance(good, remote.data_dir)) as conn:
        assert conn.run("true").rc == 0
    # every pinned key is recorded for ssh too (and nothing first-used)
    assert KnownHosts(known_hosts_path(remote.data_dir)).lookup(host_alias("sshcloud", good.instance_id)) == \
        parse_pins(console)


def launch_on(remote, profile: str, tmp):
    from workbench.core.lifecycle.launcher import execute, choose_offer

    spec = make_spec(tmp, "true", on_finish="keep")
    (inst,) = execute(remote.accounts, choose_offer(remote.accounts, spec, profile=profile))
    return inst


def test_a_booting_machine_is_waited_for_with_cloud_init_progress(remote, tmp_path):
    late = sshd_support.Sshd(tmp_path / "late-sshd")  # the machine's sshd is not up yet
    late._prepare()
    late.authorize(ensure_keypair(remote.data_dir).public_openssh)
    (late.bin / "cloud-init").write_text(f"#!/bin/sh\n[ -f {late.root}/booted ] && echo 'status: done' "
                                         f"|| echo 'status: running'\n")
    (late.bin / "cloud-init").chmod(0o755)
    (late.root / "cloud-init-output.log").write_text("Setting up nvidia-driver-535 (535.161.08) ...\n")
    remote.accounts.save_profile(Profile("late", "sshcloud", "loop-1",
                                         settings={"port": str(late.port), "user": late.user}))
    spec = make_spec(tmp_path, "echo trained", on_finish="keep")
    from workbench.core.lifecycle.launcher import execute, choose_offer

    (inst,) = execute(remote.accounts, choose_offer(remote.accounts, spec, profile="late"))
    events = Events()
    j = job(remote.accounts, inst, spec, events)
    j.opts.connect_deadline_s = 30
    out: dict = {}
    t = threading.Thread(target=lambda: out.setdefault("code", j.run()))
    t.start()
    try:
        wait_until(lambda: any("does not answer" in e.message for e in events.items), 10, "a not-answering state")
        late._launch()
        wait_until(lambda: "booting" in events.phases(), 15, "the cloud-init state")
        assert any("nvidia-driver-535" in e.message for e in events.items if e.phase == "booting")
        (late.root / "booted").touch()
        t.join(30)
        assert out["code"] == 0
        assert not [e for e in events.items if e.kind == "error"]
    finally:
        j.stop()
        late.stop()


def test_not_answering_is_not_ready_not_an_error(tmp_path):
    keys = ensure_keypair(tmp_path)
    port = sshd_support._free_port()
    target = Target("127.0.0.1", port, "ubuntu", "x.workbench", "x", keys.private_path, tmp_path / "kh")
    with pytest.raises(NotReadyError) as err:
        connect(target, timeout=2)
    assert "does not answer on SSH yet" in err.value.message


def test_ssh_config_include_and_user_ssh_use_the_app_key(remote, tmp_path):
    spec = make_spec(tmp_path, "true", on_finish="keep")
    inst = launch(remote.accounts, spec)
    path = sshconfig.update(remote.data_dir, add=[inst])
    text = path.read_text()
    assert f"Host {inst.launch_id} {spec.name}" in text
    assert f"Port {remote.server.port}" in text and "IdentityFile" in text
    assert f"HostKeyAlias {host_alias('sshcloud', inst.instance_id)}" in text
    assert sshconfig.include_line(remote.data_dir) == f'Include "{path}"'
    # the real OpenSSH client, with only the include file, reaches the machine by name
    user_cfg = tmp_path / "user_ssh_config"
    user_cfg.write_text(sshconfig.include_line(remote.data_dir) + "\n")
    r = subprocess.run(["ssh", "-F", str(user_cfg), "-o", "BatchMode=yes", inst.launch_id, "echo reached"],
                       capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "reached\n"
    # and so does the "Copy SSH command" line; both recorded the same key the app checks
    argv = sshconfig.ssh_argv(inst, remote.data_dir)
    r = subprocess.run(argv[:1] + ["-o", "BatchMode=yes"] + argv[1:] + ["echo again"], capture_output=True,
                       text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert r.stdout == "again\n", r.stderr
    assert KnownHosts(known_hosts_path(remote.data_dir)).lookup(host_alias("sshcloud", inst.instance_id))
    sshconfig.update(remote.data_dir, remove_launches=[inst.launch_id])
    assert inst.launch_id not in path.read_text()


def test_every_teardown_removes_the_machine_from_the_ssh_config_and_known_hosts(remote, tmp_path):
    """Not only a job's own on_finish: `down` (and Stop all, a guard: the same core teardown) cleans up too."""
    from workbench.core.lifecycle.teardown import teardown
    from workbench.core.remote import ssh_cleanup

    ssh_cleanup.install()  # what the CLI and the GUI do when they open their accounts
    spec = make_spec(tmp_path, "sleep 600", on_finish="keep")
    inst = launch(remote.accounts, spec)
    other = launch(remote.accounts, make_spec(tmp_path / "b", "sleep 600", on_finish="keep", name="other-job"))
    path = sshconfig.update(remote.data_dir, add=[inst, other])
    kh = KnownHosts(known_hosts_path(remote.data_dir))
    for i in (inst, other):
        with connect(Target.for_instance(i, remote.data_dir)) as conn:  # records the host key, as a job does
            assert conn.run("true").rc == 0
    assert kh.lookup(host_alias("sshcloud", inst.instance_id))
    assert f"Host {inst.launch_id}" in path.read_text()

    report = teardown(remote.accounts, [inst.launch_id], timeout=10, poll=0.05)

    assert report.clean
    assert f"Host {inst.launch_id}" not in path.read_text()
    assert kh.lookup(host_alias("sshcloud", inst.instance_id)) == []
    assert f"Host {other.launch_id}" in path.read_text()  # the other machine is untouched
    assert kh.lookup(host_alias("sshcloud", other.instance_id))
