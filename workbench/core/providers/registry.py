"""Provider discovery through the ``workbench.providers`` entry-point group.

Built-in providers (Local, AWS, Azure) register through the same group as
third-party ones.  Loading is per plugin and never raises: a plugin that
fails to import, is not a Provider subclass, or whose cloud SDK is missing is
listed as unavailable *with its reason* and, where one exists, the exact command
that fixes it (``fix``: ``pip install 'cloud-gpu-workbench[aws]'``); the others
keep working.  A missing SDK is found here, at discovery, from the provider's
``sdk_modules`` (looked up without importing them), so the CLI, doctor, the
Accounts view and the wizard all say "unavailable" with the fix instead of a
ModuleNotFoundError later.

Loading is also lazy: :func:`discover` reads the entry points (names only) and
imports a plugin the first time its entry is asked for, so ``status`` with an
AWS profile imports the AWS plugin and not the Azure and Alibaba ones.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Mapping

from workbench.core.domain.errors import AuthError, NotFoundError, PluginError, WorkbenchError
from workbench.core.domain.models import Profile
from workbench.core.providers.contract import Provider, ProviderContext, id_problem

if TYPE_CHECKING:
    from importlib import metadata

GROUP = "workbench.providers"
log = logging.getLogger("workbench.plugins")

DISTRIBUTION = "cloud-gpu-workbench"
# Extras that bring a built-in provider's SDK, for the "install …" hint when even the plugin cannot load.
_EXTRA_HINTS = {"aws": "aws", "azure": "azure", "alibaba": "alibaba"}
# Top-level SDK modules → the extra that installs them (a ModuleNotFoundError met later, e.g. a broken install)
_MODULE_EXTRAS = {"boto3": "aws", "botocore": "aws", "s3transfer": "aws", "azure": "azure", "msal": "azure",
                  "alibabacloud_ecs20140526": "alibaba", "alibabacloud_tea_openapi": "alibaba",
                  "alibabacloud_vpc20160428": "alibaba", "alibabacloud_credentials": "alibaba"}


def install_command(extra: str, distribution: str | None = None) -> str:
    """The exact command that installs an extra: ``pip install 'cloud-gpu-workbench[aws]'``."""
    return f"pip install '{distribution or DISTRIBUTION}[{extra}]'"


def _importable(module: str) -> bool:
    """True when ``module`` can be imported; nothing is imported to find out (not even its parents)."""
    top, *rest = module.split(".")
    try:
        spec = importlib.util.find_spec(top)  # a top-level name: looked up on sys.path, not imported
    except (ImportError, ValueError):  # a broken __spec__
        return False
    if spec is None:
        return False
    if not rest:
        return True
    for location in spec.submodule_search_locations or ():
        base = Path(location).joinpath(*rest[:-1])
        if (base / rest[-1]).is_dir() or any(base.glob(f"{rest[-1]}.*py")) or any(base.glob(f"{rest[-1]}.*.so")):
            return True
    return False


def missing_sdk(cls: type[Provider]) -> list[str]:
    """The provider's ``sdk_modules`` that cannot be imported here (none imported to find out)."""
    return [m for m in cls.sdk_modules if not _importable(m)]


def missing_module_error(exc: ModuleNotFoundError) -> PluginError:
    """A ModuleNotFoundError met after discovery (a half-installed SDK) as an error with the fix."""
    name = exc.name or "?"
    extra = _MODULE_EXTRAS.get(name.split(".")[0])
    fix = install_command(extra) if extra else f"pip install {name.split('.')[0]}"
    return PluginError(f"a module the app needs is not installed: {name}", hint=f"install it with: {fix}")


@dataclass(frozen=True)
class ProviderEntry:
    """One discovered plugin: its class when it loaded, else why not."""

    id: str
    target: str  # "module:Class" as registered
    distribution: str | None
    version: str | None
    cls: type[Provider] | None
    reason: str | None = None
    fix: str | None = None  # the exact command that makes it available ("pip install '…[aws]'")
    loaded: type[Provider] | None = None  # the class even when its SDK is missing (public prices need no SDK)

    @property
    def available(self) -> bool:
        return self.cls is not None

    @property
    def display_name(self) -> str:
        known = self.cls or self.loaded
        return known.display_name if known else self.id

    @property
    def status(self) -> str:
        """"available", or "unavailable: REASON; fix: COMMAND" (one line for tables and logs)."""
        if self.available:
            return "available"
        return f"unavailable: {self.reason or 'unknown reason'}" + (f"; fix: {self.fix}" if self.fix else "")

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "display_name": self.display_name,
            "available": self.available,
            "reason": self.reason,
            "fix": self.fix,
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
                             f"missing module {exc.name!r}{hint}",
                             fix=install_command(extra, dist_name) if extra else None)
    except Exception as exc:  # a broken plugin must never take the app down
        log.warning("provider plugin %s failed to load: %s", ep.name, exc, exc_info=True)
        return ProviderEntry(ep.name, ep.value, dist_name, version, None,
                             f"failed to import: {type(exc).__name__}: {exc}")
    if not (isinstance(obj, type) and issubclass(obj, Provider)):
        return ProviderEntry(ep.name, ep.value, dist_name, version, None,
                             "entry point is not a workbench Provider class")
    wrong_id = id_problem(obj, ep.name)
    if wrong_id:
        return ProviderEntry(ep.name, ep.value, dist_name, version, None, wrong_id)
    missing = missing_sdk(obj)
    if missing:
        extra = obj.install_extra or _EXTRA_HINTS.get(ep.name)
        names = ", ".join(repr(m) for m in missing)
        return ProviderEntry(ep.name, ep.value, dist_name, version, None,
                             f"its SDK is not installed (missing module {names})"
                             + (f"; install the [{extra}] extra" if extra else ""),
                             fix=install_command(extra, dist_name) if extra else f"pip install {missing[0]}",
                             loaded=obj)
    return ProviderEntry(ep.name, ep.value, dist_name, version, obj, loaded=obj)


class Entries(Mapping[str, ProviderEntry]):
    """The registered providers by id; each plugin is imported the first time its entry is read.

    Iterating (``list(entries)``, ``in``) only reads names; ``values()``/``items()`` load
    everything.  Thread-safe: a plugin is loaded once even when threads ask at the same time.
    """

    def __init__(self, points: Mapping[str, "metadata.EntryPoint"]) -> None:
        self._points = dict(points)
        self._loaded: dict[str, ProviderEntry] = {}
        self._lock = threading.Lock()

    def __getitem__(self, provider_id: str) -> ProviderEntry:
        with self._lock:
            entry = self._loaded.get(provider_id)
            if entry is None:
                entry = self._loaded[provider_id] = _load(self._points[provider_id])  # KeyError: unknown
            return entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._points)

    def __len__(self) -> int:
        return len(self._points)

    def __contains__(self, provider_id: object) -> bool:
        return provider_id in self._points

    def loaded(self) -> list[str]:
        """Ids of the plugins imported so far (for tests and benchmarks)."""
        with self._lock:
            return sorted(self._loaded)


def discover() -> Entries:
    """All registered providers by id, available or not (the first registration of an id wins);
    each plugin is imported when its entry is first read (see :class:`Entries`)."""
    points: dict[str, "metadata.EntryPoint"] = {}
    from importlib import metadata  # ~25 ms: not at start-up, only when plugins are listed

    for ep in sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name):
        if ep.name in points:
            log.warning("provider id %s registered twice; keeping %s", ep.name, points[ep.name].value)
            continue
        points[ep.name] = ep
    return Entries(points)


def get(entries: Mapping[str, ProviderEntry], provider_id: str) -> type[Provider]:
    """The class for ``provider_id``; NotFoundError / PluginError with the reason otherwise."""
    entry = entries.get(provider_id)
    if entry is None:
        known = ", ".join(sorted(entries)) or "none"
        raise NotFoundError(f"unknown provider {provider_id!r}", hint=f"known providers: {known}")
    if entry.cls is None:
        raise PluginError(f"provider {provider_id!r} is unavailable: {entry.reason}",
                          hint=f"install it with: {entry.fix}" if entry.fix else None)
    return entry.cls


def construct(cls: type[Provider], profile: Profile, secrets: Mapping[str, str],
              context: ProviderContext) -> Provider:
    """Instantiate a provider; a constructor that raises becomes a PluginError (or its own error)."""
    try:
        return cls(profile, secrets, context)
    except (AuthError, WorkbenchError):
        raise
    except ModuleNotFoundError as exc:
        raise missing_module_error(exc) from None
    except Exception as exc:
        log.warning("provider %s failed to construct", cls.id, exc_info=True)
        raise PluginError(f"provider {cls.id!r} failed to start: {type(exc).__name__}: {exc}") from None
