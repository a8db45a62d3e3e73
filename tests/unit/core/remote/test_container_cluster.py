"""A multi-node launch's container sees the cluster folder (issue 34): the MPI hostfile that
WORKBENCH_MPI_HOSTFILE / DSTACK_MPI_HOSTFILE name, and the inter-node ssh files, read-only at the same path
as on the machine; a single-node container does not get it."""

from __future__ import annotations

import shlex

from workbench.core.domain.models import ContainerImage
from workbench.core.remote import cluster_files, container


def _run_line(text: str) -> list[str]:
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("set -- run "))
    return shlex.split(line.strip()[len("set -- "):])


def test_a_multi_node_container_mounts_the_cluster_folder_read_only_where_the_hostfile_variable_points():
    job = "/home/ubuntu/.workbench/jobs/L1"
    text = container.script(ContainerImage("ghcr.io/lab/mpi:1"), "L1", job, f"{job}/work",
                            {"run.sh": f"{job}/run.sh"}, rank=1)
    args = _run_line(text)
    mounts = [args[i + 1] for i, a in enumerate(args) if a == "-v"]
    cluster = f"{job}/{cluster_files.CLUSTER_DIR}"  # where the hostfile and the inter-node ssh files are written
    assert f"{cluster}:{cluster}:ro" in mounts
    assert f"{job}/work:{job}/work" in mounts
    single = _run_line(container.script(ContainerImage("ghcr.io/lab/mpi:1"), "L1", job, f"{job}/work",
                                        {"run.sh": f"{job}/run.sh"}))
    assert not any("/cluster" in a for a in single)
