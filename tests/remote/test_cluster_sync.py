"""The session's remote-jobs manager drives a multi-node launch as one cluster, once every node is up."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.core.domain.jobspec import parse_spec, spec_to_dict
from workbench.core.domain.models import Instance, InstanceState
from workbench.core.remote.cluster import ClusterJob
from workbench.core.remote.job import RemoteJob
from workbench.core.remote.jobs import RemoteJobs


@dataclass
class Rec:
    spec: dict


def _node(lid: str, rank: int, state=InstanceState.RUNNING, host: str | None = "127.0.0.1") -> Instance:
    return Instance("aws", "p", f"i-{lid}-{rank}", lid, "us-east-1", "p4d.24xlarge", state, host=host,
                    extra={"node_rank": rank, "ssh_port": 1, "private_ip": f"10.0.0.{rank + 4}"})


def test_a_cluster_starts_only_with_every_node_and_as_one_job(remote):
    spec = spec_to_dict(parse_spec("name: d\nrun: x\nnum_nodes: 2\n"))
    single = spec_to_dict(parse_spec("name: s\nrun: x\n"))
    launches = {"L": Rec(spec), "S": Rec(single)}
    jobs = RemoteJobs(remote.accounts, telemetry=False)
    try:
        jobs.sync([_node("L", 1), _node("L", 0, InstanceState.PENDING, None)], launches)
        assert "L" not in jobs.jobs  # node 0 is not up yet
        jobs.sync([_node("L", 1), _node("L", 0), _node("S", 0)], launches)
        assert isinstance(jobs.jobs["L"], ClusterJob) and isinstance(jobs.jobs["S"], RemoteJob)
        assert [i.instance_id for i in jobs.jobs["L"].nodes] == ["i-L-0", "i-L-1"]
        jobs.sync([_node("L", 1), _node("L", 0)], launches)
        assert len([t for t in jobs.threads if t == "L"]) == 1  # started once
    finally:
        jobs.stop_all(wait=5)
