"""Which machines the app runs jobs on over SSH (light: no SSH, no numpy; the GUI asks at start-up)."""

from __future__ import annotations

import functools

from workbench.core.domain.models import Instance


def is_remote(inst: Instance) -> bool:
    """A machine whose job the app runs over SSH (its provider's ``runs_jobs_over_ssh``)."""
    return _over_ssh(inst.provider)


def is_queued(inst: Instance) -> bool:
    """A batch job on a scheduler's login node (its provider ``SupportsBatchJobs``): one instance for all of the job's
    nodes, GPU readings from the provider (the GPUs are on the compute nodes, not on the host the SSH runner reaches)."""
    return _batch(inst.provider)


def streams_gpus(inst: Instance) -> bool:
    """The app streams ``nvidia-smi`` from the instance's own host over SSH (a cloud machine)."""
    return is_remote(inst) and not is_queued(inst)


@functools.lru_cache(maxsize=None)
def _over_ssh(provider_id: str) -> bool:
    if provider_id == "local":
        return False  # the common case, without listing plugins
    from workbench.core.providers.registry import discover

    entry = discover().get(provider_id)
    return entry is None or entry.cls is None or bool(entry.cls.runs_jobs_over_ssh)


@functools.lru_cache(maxsize=None)
def _batch(provider_id: str) -> bool:
    if provider_id == "local":
        return False
    from workbench.core.providers.contract import SupportsBatchJobs
    from workbench.core.providers.registry import discover

    entry = discover().get(provider_id)
    return entry is not None and entry.cls is not None and issubclass(entry.cls, SupportsBatchJobs)

