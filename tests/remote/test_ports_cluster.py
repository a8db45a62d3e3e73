"""Ports of a multi-node launch on AWS (moto) with two real sshd nodes: the head's port unless the spec says
``node: all`` (then one forward per node, each over its own node's SSH), and the launch's security group
still lets in SSH alone — forwarding opens nothing to the internet."""

from __future__ import annotations

import socket
import time
import urllib.request

import pytest

from cluster_nodes import MotoCluster

from .helpers import quick_options

from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.teardown import teardown
from workbench.core.remote.cluster import ClusterJob
from workbench.core.remote.forwards import Forwards
from workbench.core.remote.port_services import find_url, port_of

pytestmark = pytest.mark.timeout(300)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fetch(url: str, deadline_s: float = 60) -> bytes:
    end = time.monotonic() + deadline_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                return resp.read()
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.3)


def test_node_all_forwards_every_node_and_the_security_group_keeps_ssh_only(tmp_path, monkeypatch):
    every, head_only = _free_port(), _free_port()
    work = tmp_path / "work"
    work.mkdir()
    (work / "hello.txt").write_text("hello\n")
    # the two "machines" share this computer's loopback: the head serves both ports for both nodes
    run = (f'if [ "$WORKBENCH_NODE_RANK" = 0 ]; then python3 -u -m http.server {head_only} --bind 127.0.0.1 & '
           f'exec python3 -u -m http.server {every} --bind 127.0.0.1; else exec sleep 600; fi')
    spec = parse_spec(f"name: ports-ddp\nnum_nodes: 2\nworkdir: {work}\nresources: {{gpu: 'V100:1'}}\n"
                      f"run: '{run}'\nports: [{{port: {every}, name: http, node: all}}, {{port: {head_only}, "
                      f"name: tensorboard}}]\n", source=str(tmp_path / "spec.yaml"), base_dir=tmp_path)
    with MotoCluster.create(tmp_path, monkeypatch) as mc:
        nodes = mc.launch(spec)
        lid = nodes[0].launch_id
        ec2 = mc.ec2()
        described = [i for r in ec2.describe_instances(InstanceIds=[i.instance_id for i in nodes])["Reservations"]
                     for i in r["Instances"]]
        ids = sorted({g["GroupId"] for i in described
                      for g in i.get("SecurityGroups", []) + [g for n in i.get("NetworkInterfaces", [])
                                                               for g in n.get("Groups", [])]})
        assert ids, described
        groups = ec2.describe_security_groups(GroupIds=ids)
        rules = [p for g in groups["SecurityGroups"] for p in g["IpPermissions"]]
        assert rules, groups
        for rule in rules:  # SSH from an address, or the launch's own nodes to each other; nothing else
            if rule.get("IpRanges") or rule.get("Ipv6Ranges"):
                assert (rule["IpProtocol"], rule.get("FromPort"), rule.get("ToPort")) == ("tcp", 22, 22), rule
            else:
                assert rule["UserIdGroupPairs"] and {p["GroupId"] for p in rule["UserIdGroupPairs"]} <= set(ids), rule
        assert ClusterJob(mc.accounts, nodes, spec, quick_options()).launch()
        log = mc.remote_dir(0) / "jobs" / lid / "output.log"  # the servers take their ports before any forward
        end = time.monotonic() + 60
        while not (log.exists() and log.read_text().count("Serving HTTP") == 2):
            assert time.monotonic() < end, log.read_text() if log.exists() else "no log"
            time.sleep(0.2)
        fw = Forwards(mc.accounts.store.path.parent, reconnect_deadline_s=20)
        fw.stop_with_teardown()
        try:
            both = fw.open(lid, nodes, port_of(spec.ports, every))
            assert [(o.node_rank, o.instance_id) for o in both] == [(0, nodes[0].instance_id),
                                                                     (1, nodes[1].instance_id)]
            assert len({o.local_port for o in both}) == 2
            for o in both:
                url = find_url(fw, lid, port_of(spec.ports, every), o, None)
                assert _fetch(url + "hello.txt") == b"hello\n"
            for server in mc.servers:  # each forward rides its own node's SSH connection
                assert server.sessions(), server.address
            (head,) = fw.open(lid, nodes, port_of(spec.ports, head_only))
            assert head.node_rank == 0 and _fetch(f"http://{head.local_address}/hello.txt") == b"hello\n"
            after = ec2.describe_security_groups(GroupIds=ids)
            assert [p for g in after["SecurityGroups"] for p in g["IpPermissions"]] == rules  # untouched
            assert teardown(mc.accounts, [lid], timeout=30, poll=0.05).clean
            assert fw.list() == []
        finally:
            fw.close()
