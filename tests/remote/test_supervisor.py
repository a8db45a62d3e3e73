"""The supervised unit: launcher variables, the systemd-run path (a fake systemd-run on the sshd's PATH)."""

from __future__ import annotations

import shlex

from workbench.core import paths
from workbench.core.domain.models import Instance, InstanceState
from workbench.core.remote import supervisor
from workbench.core.remote.connection import Target, connect

from .helpers import launch, make_spec, wait_until


def _inst(gpus: int, iid: str = "i-1", **kw) -> Instance:
    return Instance("aws", "p", iid, "l-1", "r", "t", InstanceState.RUNNING, gpu_count=gpus, **kw)


def test_launcher_variables_for_one_and_several_gpus(tmp_path):
    spec = make_spec(tmp_path, "torchrun train.py", env={"MASTER_PORT": "12355"})
    one = supervisor.job_env(spec, _inst(1), "l-1")
    assert one["NPROC_PER_NODE"] == "1" and one["CUDA_VISIBLE_DEVICES"] == "0" and one["NNODES"] == "1"
    eight = supervisor.job_env(spec, _inst(8), "l-1")
    assert eight["PET_NPROC_PER_NODE"] == "8" and eight["CUDA_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"
    assert eight["MASTER_ADDR"] == "127.0.0.1" and eight["MASTER_PORT"] == "12355"  # the spec's env wins
    assert "RANK" not in eight and "WORLD_SIZE" not in eight  # per-process: the launcher's to set
    nodes = (_inst(8, "i-a", extra={"private_ip": "10.0.0.5"}), _inst(8, "i-b", extra={"private_ip": "10.0.0.6"}))
    second = supervisor.job_env(spec, nodes[1], "l-1", nodes)
    assert (second["NNODES"], second["NODE_RANK"], second["MASTER_ADDR"]) == ("2", "1", "10.0.0.5")
    assert second["WORKBENCH_LAUNCH_ID"] == "l-1"
    text = supervisor.render(spec, "l-1", {"A": "it's"}, "setsid").files["env.sh"]
    assert text == "A='it'\"'\"'s'\n"  # shell-quoted


def test_systemd_run_is_used_when_the_machine_has_it(remote, tmp_path):
    calls = remote.server.root / "systemd-run.calls"
    fake = remote.server.bin / "systemd-run"
    # a stand-in for systemd-run: records its arguments, then runs the command detached like a unit would
    fake.write_text("#!/bin/sh\n"
                    f"echo \"$@\" >> {calls}\n"
                    "while [ $# -gt 0 ]; do case \"$1\" in --*) shift ;; *) break ;; esac; done\n"
                    "setsid nohup \"$@\" < /dev/null > /dev/null 2>&1 &\n")
    fake.chmod(0o755)
    try:
        spec = make_spec(tmp_path, "echo from-a-unit; exit 4", on_finish="keep")
        inst = launch(remote.accounts, spec)
        with connect(Target.for_instance(inst, remote.data_dir)) as conn:
            info = supervisor.parse_probe(conn.check(supervisor.probe_command(inst.launch_id), "probe"))
            assert info["supervisor"] == "setsid"  # this test host has no systemd
            jdir = f"{info['base']}/jobs/{inst.launch_id}"
            conn.check(f"mkdir -p {shlex.quote(jdir)}/work", "mkdir")
            env = supervisor.job_env(spec, inst, inst.launch_id)
            supervisor.install(conn, jdir, supervisor.render(spec, inst.launch_id, env, "systemd-user"))
            assert supervisor.start(conn, jdir) == "started systemd-user"
            assert supervisor.start(conn, jdir) == "already"  # idempotent
            wait_until(lambda: conn.run(f"cat {jdir}/exit_code").out.strip() == "4", 15, "the unit's exit code")
            assert conn.run(f"cat {jdir}/output.log").out == "from-a-unit\n"
        args = calls.read_text().split()
        assert args[:4] == ["--user", "--quiet", "--collect", f"--unit=workbench-{inst.launch_id}"]
        assert args[-1].endswith(f"/jobs/{inst.launch_id}/supervise.sh")
        assert len(calls.read_text().splitlines()) == 1
    finally:
        fake.unlink()
    assert paths.job_dir(inst.launch_id).exists()


def test_the_scripts_arrive_whole_in_one_stream_with_private_modes_and_are_replaced(remote, tmp_path):
    """On a real sshd: the job folder 0700, env.sh and container.env 0600, scripts 0755, every byte as rendered
    (also a file without a final newline), and writing again replaces them (a reconnect rewrites the folder)."""
    spec = make_spec(tmp_path, "echo hi")
    inst = launch(remote.accounts, spec)
    files = {"env.sh": "TOKEN='s3cret'\n", "container.env": "PW=x", "run.sh": "#!/bin/sh\necho ü\n",
             "supervise.sh": "#!/bin/sh\n"}
    with connect(Target.for_instance(inst, remote.data_dir)) as conn:
        info = supervisor.parse_probe(conn.check(supervisor.probe_command(inst.launch_id), "probe"))
        jdir = f"{info['base']}/jobs/{inst.launch_id}"
        supervisor.install(conn, jdir, supervisor.Scripts(files))
        modes = dict(line.split(" ", 1)[::-1] for line in conn.check(
            f"cd {shlex.quote(jdir)} && stat -c '%a %n' . work env.sh container.env run.sh supervise.sh", "stat")
            .splitlines())
        assert modes == {".": "700", "work": "755", "env.sh": "600", "container.env": "600", "run.sh": "755",
                         "supervise.sh": "755"}, modes
        for name, text in files.items():
            assert conn.run(f"cat {shlex.quote(jdir + '/' + name)}").out == text
        supervisor.install(conn, jdir, supervisor.Scripts({**files, "run.sh": "#!/bin/sh\necho again\n"}))
        assert conn.run(f"cat {shlex.quote(jdir)}/run.sh").out == "#!/bin/sh\necho again\n"
        assert conn.check(f"stat -c %a {shlex.quote(jdir)}/env.sh", "stat").strip() == "600"
