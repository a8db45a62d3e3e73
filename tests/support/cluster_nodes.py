"""N machines of one AWS launch as N real sshd "nodes" on loopback addresses, for the multi-node tests.

The AWS plugin launches into moto (real HTTP, real boto3) with the profile settings a user on
a VPN would use: ``subnet`` (a moto subnet whose range is a loopback range, 127.A.B.0/24, so
moto hands the machines private addresses this computer can reach) and
``ssh_address=USER@private:PORT`` (reach each machine at its private address).  After the
launch, one real OpenSSH sshd per machine listens on that machine's private address and the
shared port, with its own host key, its own job folder (``WORKBENCH_REMOTE_DIR``) and its own
authorized-keys file, so the nodes are told apart exactly as real machines are: by address.
Everything else is the app's real path (launcher -> AWS plugin -> cluster runner -> SSH).

    with MotoCluster.create(tmp_path, monkeypatch) as mc:
        nodes = mc.launch(spec)          # the launch's instances, rank order; sshd started per node
        ClusterJob(mc.accounts, nodes, spec, ...).run()
"""

from __future__ import annotations

import importlib
import os
import random
import signal
import socket
from dataclasses import dataclass, field
from pathlib import Path

import boto3

import aws_moto
import sshd as sshd_support

SETTINGS = {"ssh_cidr": "198.51.100.23/32", "poll_s": "0.01", "terminate_wait_s": "10", "connect_timeout": "2",
            "read_timeout": "20", "retry_backoff_cap_s": "0.02", "pricing": "snapshot"}
KEY_ID = "AKIAWORKBENCHTEST01"


def _free_port(address: str) -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


@dataclass
class MotoCluster:
    """One test's moto account, AWS profile and sshd nodes (see the module doc)."""

    root: Path
    stack: aws_moto.MotoStack
    accounts: object
    prefix: str  # "127.A.B."
    port: int
    user: str
    servers: list[sshd_support.Sshd] = field(default_factory=list)
    sshd_env: dict[str, str] = field(default_factory=dict)  # more of the nodes' session environment (DOCKER_HOST)

    @classmethod
    def create(cls, root: Path, monkeypatch, profile: str = "moto",
               sshd_env: dict[str, str] | None = None) -> "MotoCluster":
        from workbench.core.domain.models import Profile
        from workbench_testing import fake_cloud_accounts

        stack = aws_moto.start()
        stack.reset()
        monkeypatch.setenv("WORKBENCH_HOME", str(root / "home"))
        acc, creds = fake_cloud_accounts(monkeypatch)
        importlib.invalidate_caches()
        rnd = random.Random()
        a, b = rnd.randrange(100, 250), rnd.randrange(1, 250)
        ec2 = boto3.client("ec2", region_name="us-east-1", endpoint_url=stack.url, aws_access_key_id="AKIAARRANGE",
                           aws_secret_access_key="arrange")
        vpc = ec2.create_vpc(CidrBlock=f"127.{a}.0.0/16")["Vpc"]["VpcId"]
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock=f"127.{a}.{b}.0/24")["Subnet"]["SubnetId"]
        prefix = f"127.{a}.{b}."
        port = _free_port(prefix + "4")
        user = sshd_support.Sshd(root / "probe").user
        acc.save_profile(Profile(profile, "aws", "us-east-1", endpoint_url=stack.url, settings={
            **SETTINGS, "subnet": subnet, "ssh_address": f"{user}@private:{port}"}))
        creds.set("aws", profile, {"access_key_id": KEY_ID, "secret_access_key": "not-a-real-secret"})
        return cls(root, stack, acc, prefix, port, user, sshd_env=dict(sshd_env or {}))

    def ec2(self):
        return boto3.client("ec2", region_name="us-east-1", endpoint_url=self.stack.url,
                            aws_access_key_id=KEY_ID, aws_secret_access_key="x")

    def launch(self, spec, start_sshd: bool = True, secret_env: dict[str, str] | None = None):
        """Plan and execute ``spec`` on the profile; start one sshd per node at its private address."""
        from workbench.core.lifecycle.launcher import choose_offer, execute

        lp = choose_offer(self.accounts, spec, provider="aws")
        nodes = sorted(execute(self.accounts, lp, secret_env=secret_env), key=lambda i: i.extra.get("node_rank", 0))
        if start_sshd:
            self.start_nodes(nodes)
        return nodes

    def start_nodes(self, nodes) -> None:
        from workbench.core.providers.sshkeys import ensure_keypair

        key = ensure_keypair(self.accounts.store.path.parent).public_openssh
        for inst in nodes:
            address = inst.extra["private_ip"]
            assert address.startswith(self.prefix), address
            server = sshd_support.Sshd.start(self.root / f"node-{inst.extra.get('node_rank', 0)}", address, self.port,
                                             env=self.sshd_env)
            server.authorize(key)
            server.set_gpu("v100x1")
            self.servers.append(server)

    def remote_dir(self, rank: int) -> Path:
        return self.servers[rank].remote_dir

    def aws_state(self) -> dict[str, list]:
        """What of ours exists in moto: live instances, security groups, key pairs, placement groups."""
        ec2 = self.ec2()
        owned = [{"Name": "tag:workbench:managed", "Values": ["true"]}]
        live = [i["InstanceId"] for r in ec2.describe_instances(Filters=owned + [
            {"Name": "instance-state-name", "Values": ["pending", "running", "stopping", "stopped"]}])["Reservations"]
            for i in r["Instances"]]
        return {"instances": live,
                "groups": [g["GroupId"] for g in ec2.describe_security_groups(Filters=owned)["SecurityGroups"]],
                "keys": [k["KeyName"] for k in ec2.describe_key_pairs(Filters=owned)["KeyPairs"]],
                "placement": [p["GroupName"] for p in ec2.describe_placement_groups(Filters=owned)["PlacementGroups"]]}

    def kill_jobs(self, rank: int) -> int:
        """SIGKILL the supervised job groups on node ``rank`` (moto's terminate cannot reach them)."""
        killed = 0
        for pidfile in self.remote_dir(rank).glob("jobs/*/supervisor.pid"):
            try:
                os.killpg(int(pidfile.read_text().strip()), signal.SIGKILL)
                killed += 1
            except (OSError, ValueError):
                pass
        return killed

    def close(self) -> None:
        from workbench.core.lifecycle.teardown import teardown

        try:
            teardown(self.accounts, None, timeout=10, poll=0.05)
        finally:
            for rank, server in enumerate(self.servers):
                self.kill_jobs(rank)
                server.end_jobs()  # anything else of a job on this "machine" (moto's terminate cannot reach it)
                server.stop()
            self.accounts.store.close()
            self.stack.reset()

    def __enter__(self) -> "MotoCluster":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
