"""Provider discovery through the ``workbench.providers`` entry-point group.

Built-in providers (Local, AWS, Azure) register through the same group as
third-party ones.  Loading is per plugin and never raises: a plugin that
fails to import, is not a Provider subclass, or whose cloud SDK is missing is
listed as unavailable *with its reason*, and the others keep working.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from workbench.core.domain.errors import AuthError, NotFoundError, PluginError, WorkbenchError
from workbench.core.domain.models import Profile
from workbench.core.providers.contract import Provider, ProviderContext

if TYPE_CHECKING:
    from importlib import metadata

GROUP = "workbench.providers"
log = logging.getLogger("workbench.plugins")

# Extras that bring a built-in provider's SDK, for the "install …" hint.
_EXTRA_HINTS = {"aws": "aws", "azure": "azure", "alibaba": "alibaba"}


@dataclass(frozen=True)
class ProviderEntry:
    """One discovered plugin: its class when it loaded, else why not."""

    id: str
    target: str  # "module:Class" as registered
    distribution: str | None
    version: str | None
    cls: type[Provider] | None
    reason: str | None = None

    @property
    def available(self) -> bool:
        return self.cls is not None

    @property
    def display_name(self) -> str:
        return self.cls.display_name if self.cls else self.id

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "display_name": self.display_name,
            "available": self.available,
            "reason": self.reason,
            "entry_point": self.target,
            "distribution": self.distribution,
            "version": self.version,
            "credential_fields": [
                {"key": f.key, "label": f.label, "secret": f.secret, "optional": f.optional}
                for f in (self.cls.credential_fields if self.cls else ())
            ],
        }


def _load(ep: "metadata.EntryPoint") -> ProviderEntry:
    dist = getattr(ep, "dist", None)
    dist_name = dist.metadata["Name"] if dist is not None else None
    version = dist.version if dist is not None else None
    try:
        obj = ep.load()
    except ModuleNotFoundError as exc:
        extra = _EXTRA_HINTS.get(ep.name)
        hint = f"; install the [{extra}] extra" if extra else ""
        return ProviderEntry(ep.name, ep.value, dist_name, version, None,
                             f"missing module {exc.name!r}{hint}")
    except Exception as exc:  # a broken plugin must never take the app down
        log.warning("provider plugin %s failed to load: %s", ep.name, exc, exc_info=True)
        return ProviderEntry(ep.name, ep.value, dist_name, version, None,
                             f"failed to import: {type(exc).__name__}: {exc}")
    if not (isinstance(obj, type) and issubclass(obj, Provider)):
        return ProviderEntry(ep.name, ep.value, dist_name, version, None,
                             "entry point is not a workbench Provider class")
    if getattr(obj, "id", None) != ep.name:
        return ProviderEntry(ep.name, ep.value, dist_name, version, None,
                             f"provider id {getattr(obj, 'id', None)!r} does not match entry point name")
    return ProviderEntry(ep.name, ep.value, dist_name, version, obj)


def discover() -> dict[str, ProviderEntry]:
    """All registered providers by id, available or not (the first registration of an id wins)."""
    found: dict[str, ProviderEntry] = {}
    from importlib import metadata  # ~25 ms: not at start-up, only when plugins are listed

    for ep in sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name):
        if ep.name in found:
            log.warning("provider id %s registered twice; keeping %s", ep.name, found[ep.name].target)
            continue
        found[ep.name] = _load(ep)
    return found


def get(entries: Mapping[str, ProviderEntry], provider_id: str) -> type[Provider]:
    """The class for ``provider_id``; NotFoundError / PluginError with the reason otherwise."""
    entry = entries.get(provider_id)
    if entry is None:
        known = ", ".join(sorted(entries)) or "none"
        raise NotFoundError(f"unknown provider {provider_id!r}", hint=f"known providers: {known}")
    if entry.cls is None:
        raise PluginError(f"provider {provider_id!r} is unavailable: {entry.reason}")
    return entry.cls


def construct(cls: type[Provider], profile: Profile, secrets: Mapping[str, str],
              context: ProviderContext) -> Provider:
    """Instantiate a provider; a constructor that raises becomes a PluginError (or its own error)."""
    try:
        return cls(profile, secrets, context)
    except (AuthError, WorkbenchError):
        raise
    except Exception as exc:
        log.warning("provider %s failed to construct", cls.id, exc_info=True)
        raise PluginError(f"provider {cls.id!r} failed to start: {type(exc).__name__}: {exc}") from None
