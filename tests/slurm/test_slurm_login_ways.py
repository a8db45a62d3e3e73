"""The ways a Slurm profile logs in to its login node (issue 35): through a jump host, with a private key kept only in
the keyring, with ssh-agent's keys.  Real sshds (the login node in front of the real cluster, a second one as the
bastion), the real Secret Service, a real ssh-agent; each job launched by the `workbench` CLI as a user would.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from sshd import Sshd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from wbcli import Workbench, wait_for  # noqa: E402

pytestmark = pytest.mark.timeout(120)

JOB = "resources:\n  gpu: V100:1\nguards:\n  max_runtime: 5m\nrun: echo \"hello from $SLURMD_NODENAME\"\n"


def _louder(server: Sshd, level: str) -> None:
    """Restart ``server`` with LogLevel ``level`` (what it logs is the test's evidence)."""
    server.config.write_text(server.config.read_text().replace("LogLevel ERROR", f"LogLevel {level}"))
    server.restart()


def _run_job(wb: Workbench, name: str, env: dict | None = None) -> str:
    spec = wb.home.parent / f"{name}.yaml"
    spec.write_text(f"name: {name}\n{JOB}")
    r = wb("run", str(spec), "--profile", "hpc", "--yes", "--interval", "0.3", env=env, timeout=100)
    assert "exit code: 0" in r.err, r.out + r.err
    assert re.search(r"hello from \w+", r.out), r.out
    return r.out


@pytest.fixture
def cli(tmp_path):
    wb = Workbench(tmp_path / "home")
    (wb.home / "data").mkdir(parents=True)
    servers: list[Sshd] = []
    wb.servers = servers
    yield wb
    subprocess.run(wb.argv("down", "--all", "--yes", "--include-own", "--timeout", "30"), env=wb.env,
                   capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    for s in servers:
        s.stop()


def _app_key(wb: Workbench) -> str:
    from workbench.core.providers.sshkeys import ensure_keypair

    return ensure_keypair(wb.home / "data").public_openssh


def test_the_login_node_is_reached_through_a_jump_host_and_a_job_runs(cli, slurm_cluster, tmp_path):
    login = slurm_cluster.login_node(tmp_path / "login", _app_key(cli))
    cli.servers.append(login)
    bastion = Sshd.start(tmp_path / "bastion")
    cli.servers.append(bastion)
    bastion.authorize(_app_key(cli))
    _louder(login, "VERBOSE")  # "Connection from 127.0.0.1 port P on …" for every connection it takes
    _louder(bastion, "DEBUG1")  # "server_request_direct_tcpip: originator …, target … port L" for every hop
    r = cli("profiles", "add", "slurm", "hpc", "--set", "host=127.0.0.1", "--set", f"port={login.port}",
            "--set", f"user={login.user}", "--set", f"jump={bastion.user}@127.0.0.1:{bastion.port}")
    assert r.rc == 0, r.err

    # in this process: the connection the provider holds comes from a session process of the bastion's sshd
    from workbench.core.domain.models import Profile
    from workbench.core.providers.contract import ProviderContext
    from workbench_slurm.provider import SlurmProvider

    prov = SlurmProvider(Profile("hpc", "slurm", settings={"host": "127.0.0.1", "port": str(login.port),
                                                            "user": login.user,
                                                            "jump": f"127.0.0.1:{bastion.port}"}),
                         {}, ProviderContext("install-jump", cli.home / "data"))
    try:
        assert prov.check_credentials().principal == login.user
        peers = [c.raddr for c in psutil.net_connections("tcp")
                 if c.laddr and c.laddr.port == login.port and c.status == psutil.CONN_ESTABLISHED and c.raddr]
        owners = {c.pid for c in psutil.net_connections("tcp")
                  if c.laddr and c.raddr and (c.laddr.ip, c.laddr.port) in {(p.ip, p.port) for p in peers}}
        bastion_sessions = {p.pid for p in psutil.Process(bastion.proc.pid).children(recursive=True)}
        assert peers and owners and owners <= bastion_sessions, (peers, owners, bastion_sessions)
        assert os.getpid() not in owners
    finally:
        prov.login.close()
    # both host keys were learned under their own names, and are checked from now on
    known = (cli.home / "data" / "ssh" / "known_hosts").read_text()
    assert login.host_public_key().split()[1] in known and bastion.host_public_key().split()[1] in known
    assert "jump.workbench" in known

    logs = (login.root / "sshd.log", bastion.root / "sshd.log")
    before = [f.stat().st_size for f in logs]
    _run_job(cli, "viajump")
    # every connection the login node took during the run (the CLI's provider and its SSH runner) was a hop the
    # bastion made for a client
    login_log, bastion_log = (f.read_bytes()[n:].decode() for f, n in zip(logs, before))
    took = len(re.findall(r"Connection from 127\.0\.0\.1 port \d+", login_log))
    hops = len(re.findall(rf"direct.tcpip: originator .* target 127\.0\.0\.1 port {login.port}\b", bastion_log))
    assert took >= 3 and hops == took, (took, hops)

    # a bastion that now shows another host key is refused (the login node is never asked)
    bastion.restart(new_host_key=True)
    r = cli("credentials", "check", "slurm", "hpc", "--json")
    assert r.rc != 0 and r.json["error"]["kind"] == "host_key", r.out + r.err
    assert "jump host" in r.json["error"]["message"]
