"""The ways a Slurm profile logs in to its login node (issue 35): through a jump host, with a private key kept only in
the keyring, with ssh-agent's keys.  Real sshds (the login node in front of the real cluster, a second one as the
bastion), the real Secret Service, a real ssh-agent; each job launched by the `workbench` CLI as a user would.
"""

from __future__ import annotations

import json
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


def _run_job(wb: Workbench, name: str, env: dict | None = None, profile: str = "hpc") -> str:
    spec = wb.home.parent / f"{name}.yaml"
    spec.write_text(f"name: {name}\n{JOB}")
    r = wb("run", str(spec), "--profile", profile, "--yes", "--interval", "0.3", env=env, timeout=100)
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
    # every connection the login node took during the run was a hop the bastion made for a client — one: the
    # CLI's provider and its SSH runner (upload, sbatch, the log) share the login's transport (logins.acquire)
    login_log, bastion_log = (f.read_bytes()[n:].decode() for f, n in zip(logs, before))
    took = len(re.findall(r"Connection from 127\.0\.0\.1 port \d+", login_log))
    hops = len(re.findall(rf"direct.tcpip: originator .* target 127\.0\.0\.1 port {login.port}\b", bastion_log))
    assert took == 1 and hops == took, (took, hops)

    # a bastion that now shows another host key is refused (the login node is never asked)
    bastion.restart(new_host_key=True)
    r = cli("credentials", "check", "slurm", "hpc", "--json")
    assert r.rc != 0 and r.json["error"]["kind"] == "host_key", r.out + r.err
    assert "jump host" in r.json["error"]["message"]


def _user_key() -> tuple[str, str, str]:
    """A fresh ed25519 key of "the user": (OpenSSH private text, public line, SHA256 fingerprint as sshd logs it)."""
    import base64
    import hashlib

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    blob = base64.b64decode(public.split()[1])
    return private, public + " alice@laptop", "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def _accepted(login: Sshd) -> set[str]:
    """The key fingerprints the login node accepted (its LogLevel VERBOSE log)."""
    return set(re.findall(r"Accepted publickey for \S+ from \S+ port \d+ ssh2: \S+ (SHA256:\S+)",
                          (login.root / "sshd.log").read_text()))


def _files_under(root: Path):
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            if p.is_file() and not p.is_symlink():
                yield p


def test_a_private_key_kept_only_in_the_keyring_opens_the_login_node_and_runs_a_job(cli, slurm_cluster, tmp_path):
    private, public, fp = _user_key()
    hpc = f"hpc-key-{os.getpid()}"  # the keyring is one for the whole test run: a name no other process uses
    login = slurm_cluster.login_node(tmp_path / "login", public)  # the app's own key is NOT let in
    cli.servers.append(login)
    _louder(login, "VERBOSE")
    r = cli("profiles", "add", "slurm", hpc, "--set", "host=127.0.0.1", "--set", f"port={login.port}",
            "--set", f"user={login.user}")
    assert r.rc == 0, r.err
    # without the key the app's own is offered, and refused: the error says so
    r = cli("credentials", "check", "slurm", hpc, "--json")
    assert r.rc != 0 and r.json["error"]["kind"] == "auth" and "refused" in r.json["error"]["message"], r.out

    r = cli("credentials", "set", "slurm", hpc, "--stdin", "--json", stdin=json.dumps({"private_key": private}))
    assert r.rc == 0 and r.json["stored"] == ["private_key"], r.out + r.err
    r = cli("credentials", "check", "slurm", hpc, "--json")
    assert r.rc == 0 and r.json["principal"] == login.user, r.out + r.err
    _run_job(cli, "keyring", profile=hpc)
    assert _accepted(login) == {fp}  # the provider's logins and the runner's: all with the keyring's key
    # the key never reached a file of the app (logs, records, known_hosts, the job's files on the login node)
    body = "".join(private.strip().splitlines()[1:-1])[-80:-8]  # the secret part (the start is a common header)
    for root in (cli.home, login.remote_dir):
        for f in _files_under(root):
            text = f.read_bytes().decode("latin-1").replace("\n", "")
            assert body not in text, f

    # auth=keyring without a stored key is refused before any connection, saying what to do
    cli("credentials", "delete", "slurm", hpc)
    assert cli("profiles", "add", "slurm", hpc, "--set", "auth=keyring").rc == 0
    r = cli("credentials", "check", "slurm", hpc, "--json")
    assert r.rc != 0 and "none is stored" in r.json["error"]["message"], r.out


def test_ssh_agent_keys_open_the_login_node_and_run_a_job(cli, slurm_cluster, tmp_path):
    private, public, fp = _user_key()
    login = slurm_cluster.login_node(tmp_path / "login", public)
    cli.servers.append(login)
    _louder(login, "VERBOSE")
    sock = tmp_path / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(sock.exists, timeout=10)
        keyfile = tmp_path / "id_user"
        keyfile.write_text(private)
        keyfile.chmod(0o600)
        env = dict(cli.env, SSH_AUTH_SOCK=str(sock))
        add = subprocess.run(["ssh-add", str(keyfile)], env=env, capture_output=True, text=True, timeout=10)
        assert add.returncode == 0, add.stderr
        keyfile.unlink()  # from now on only the agent holds it
        r = cli("profiles", "add", "slurm", "hpc", "--set", "host=127.0.0.1", "--set", f"port={login.port}",
                "--set", f"user={login.user}", "--set", "auth=agent")
        assert r.rc == 0, r.err
        # no agent reachable: a clear error naming ssh-agent
        no_agent = {k: v for k, v in cli.env.items() if k != "SSH_AUTH_SOCK"}
        r = cli("credentials", "check", "slurm", "hpc", "--json", env=no_agent)
        assert r.rc != 0 and "ssh-agent" in r.json["error"]["message"], r.out
        r = cli("credentials", "check", "slurm", "hpc", "--json", env=env)
        assert r.rc == 0, r.out + r.err
        _run_job(cli, "agent", env=env)
        # detached: the background `workbench start` builds the provider too, so it logs in the same way
        r = cli("launch", str(cli.home.parent / "agent.yaml"), "--profile", "hpc", "--yes", "--detach", "--json",
                env=env, timeout=60)
        assert r.rc == 0, r.out + r.err
        r = cli("logs", r.json["launch"]["launch_id"], "--follow", env=env, timeout=90)
        assert r.rc == 0 and re.search(r"hello from \w+", r.out), r.out + r.err
        assert _accepted(login) == {fp}
    finally:
        agent.terminate()
        agent.wait(10)
