"""Which machines the app runs jobs on over SSH (light: no SSH, no numpy; the GUI asks at start-up)."""

from __future__ import annotations

import functools

from workbench.core.domain.models import Instance


def is_remote(inst: Instance) -> bool:
    """A machine whose job the app runs over SSH (its provider's ``runs_jobs_over_ssh``)."""
    return _over_ssh(inst.provider)


@functools.lru_cache(maxsize=None)
def _over_ssh(provider_id: str) -> bool:
    if provider_id == "local":
        return False  # the common case, without listing plugins
    from workbench.core.providers.registry import discover

    entry = discover().get(provider_id)
    return entry is None or entry.cls is None or bool(entry.cls.runs_jobs_over_ssh)
