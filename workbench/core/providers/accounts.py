"""Profiles → ready-to-use Provider objects.

Ties the store (profiles), the registry (provider classes) and the keyring
(secrets) together.  Used by the CLI and by the GUI's worker threads.  A
provider is built on first use, so that a cloud SDK is imported only when a
profile of that cloud is used.  Building one (keyring read, SDK import,
client setup) happens outside the accounts' lock, once per profile: callers
asking for the same profile meanwhile wait for that one build (a Future),
while other profiles build at the same time, so a cold start's reconcile and
offer fan-outs run in parallel.

A ``local`` profile of the Local provider always exists (built in), so a new
user can run jobs on this computer before configuring any cloud.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Mapping

from workbench.core import paths
from workbench.core.domain.errors import AuthError, NoKeyringError, NotFoundError
from workbench.core.domain.models import Profile
from workbench.core.providers.contract import Provider, ProviderContext
from workbench.core.providers.registry import Entries, ProviderEntry, construct, discover, get
from workbench.core.store.database import Store

if TYPE_CHECKING:
    from workbench.core.providers.credentials import CredentialStore  # imported on first use: keyring costs ~50 ms

log = logging.getLogger("workbench.accounts")

BUILTIN_LOCAL = Profile(name="local", provider="local", region="local")


class Accounts:
    """Resolves profile names to providers; thread-safe."""

    def __init__(self, store: Store, entries: Mapping[str, ProviderEntry] | None = None,
                 credentials: "CredentialStore | None" = None) -> None:
        self.store = store
        self._entries = (entries if isinstance(entries, Entries) or entries is None  # lazy: keep it so
                         else dict(entries))
        self._credentials = credentials
        self._providers: dict[str, Provider] = {}
        #: profile name → the build in progress: (the profile it is for, its future, the generation)
        self._building: dict[str, tuple[Profile, Future[Provider], int]] = {}
        #: bumped by forget(): a build that started before a forget is not cached
        self._generation: dict[str, int] = {}
        self._lock = threading.RLock()  # guards the dicts only: never held while a provider is built
        if not store.list_profiles():
            self.restore_profiles()

    @property
    def entries(self) -> Mapping[str, ProviderEntry]:
        with self._lock:
            if self._entries is None:
                self._entries = discover()
            return self._entries

    @property
    def credentials(self) -> CredentialStore:
        with self._lock:
            if self._credentials is None:
                from workbench.core.providers.credentials import CredentialStore

                self._credentials = CredentialStore()
            return self._credentials

    @property
    def machine_identity(self) -> bool:
        """True on a machine that signs in as its own cloud identity (the controller's
        :class:`~workbench.core.controller.service.MachineCredentials`): no secret is ever missing there."""
        return bool(getattr(self._credentials, "machine_identity", False))

    @property
    def context(self) -> ProviderContext:
        return ProviderContext(install_id=paths.install_id(), data_dir=self.store.path.parent,
                               machine_identity=self.machine_identity)

    # -- profiles ---------------------------------------------------------
    # Profiles are settings, not state: each change is mirrored (without secrets) to
    # config/profiles.json, so a store that is lost or moved aside as corrupt gets them
    # back — without them, a cloud's tagged machines could not be found again.
    def _mirror_path(self):
        return paths.config_dir() / "profiles.json"

    def _write_mirror(self) -> None:
        data = [{"name": p.name, "provider": p.provider, "region": p.region, "endpoint_url": p.endpoint_url,
                 "settings": dict(p.settings)} for p in self.store.list_profiles()]
        target = self._mirror_path()
        tmp = target.with_name(f"profiles.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        os.replace(tmp, target)

    def restore_profiles(self) -> list[str]:
        """Re-import mirrored profiles missing from the store; returns their names."""
        try:
            data = json.loads(self._mirror_path().read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return []
        have = {p.name for p in self.store.list_profiles()}
        restored = []
        for d in data if isinstance(data, list) else []:
            try:
                prof = Profile(name=str(d["name"]), provider=str(d["provider"]), region=d.get("region"),
                               endpoint_url=d.get("endpoint_url"), settings=dict(d.get("settings") or {}))
            except (KeyError, TypeError, ValueError):
                continue
            if prof.name not in have:
                self.store.save_profile(prof)
                restored.append(prof.name)
        if restored:
            log.warning("restored profiles %s from %s", restored, self._mirror_path())
        return restored

    def save_profile(self, profile: Profile) -> None:
        self.store.save_profile(profile)
        self._write_mirror()
        self.forget(profile.name)

    def delete_profile(self, name: str) -> None:
        self.store.delete_profile(name)
        self._write_mirror()
        self.forget(name)

    def profiles(self) -> list[Profile]:
        """Stored profiles plus the built-in ``local`` one unless a stored profile shadows it."""
        stored = self.store.list_profiles()
        if not any(p.name == BUILTIN_LOCAL.name for p in stored):
            stored.insert(0, BUILTIN_LOCAL)
        return stored

    def profile(self, name: str) -> Profile:
        for p in self.profiles():
            if p.name == name:
                return p
        names = ", ".join(p.name for p in self.profiles())
        raise NotFoundError(f"no profile named {name!r}",
                            hint=f"profiles: {names}; add one with `workbench profiles add PROVIDER NAME`")

    def resolve(self, provider_id: str | None = None, profile_name: str | None = None) -> Profile:
        """The profile to use for a launch: the named one, else the first of the provider, else local."""
        if profile_name:
            prof = self.profile(profile_name)
            if provider_id and prof.provider != provider_id:
                raise NotFoundError(f"profile {profile_name!r} belongs to provider {prof.provider!r}, "
                                    f"not {provider_id!r}")
            return prof
        if provider_id:
            get(self.entries, provider_id)  # unknown / unavailable provider → clear error
            for p in self.profiles():
                if p.provider == provider_id:
                    return p
            raise NotFoundError(f"no profile for provider {provider_id!r}",
                                hint=f"add one with `workbench profiles add {provider_id} NAME`")
        return self.profile(BUILTIN_LOCAL.name)

    # -- providers --------------------------------------------------------
    def provider(self, profile: Profile) -> Provider:
        """The provider object for a profile (cached); AuthError when required secrets are missing.

        Thread-safe.  The first caller for a profile builds it without holding the accounts' lock;
        concurrent callers for the same profile wait for that build (and get its result or its
        error), callers for other profiles are not held up.  A failed build is not cached.
        """
        with self._lock:
            cached = self._providers.get(profile.name)
            if cached is not None and cached.profile == profile:
                return cached
            building = self._building.get(profile.name)
            if building is not None and building[0] == profile:
                future = building[1]
                owner = False
            else:
                future = Future()
                generation = self._generation.get(profile.name, 0)
                self._building[profile.name] = (profile, future, generation)
                owner = True
        if not owner:
            return future.result()
        try:
            prov = self._build(profile)
        except BaseException as exc:
            with self._lock:
                if self._building.get(profile.name, (None, None))[1] is future:
                    del self._building[profile.name]
            future.set_exception(exc)
            raise
        with self._lock:
            if self._building.get(profile.name, (None, None))[1] is future:
                del self._building[profile.name]
            if self._generation.get(profile.name, 0) == generation:
                self._providers[profile.name] = prov
        future.set_result(prov)
        return prov

    def _build(self, profile: Profile) -> Provider:
        """Construct the provider for ``profile`` (blocks: plugin import, keyring read, SDK setup)."""
        cls = get(self.entries, profile.provider)
        secrets = self._secrets_for(cls, profile)
        return construct(cls, profile, secrets, self.context)

    def _secrets_for(self, cls: type[Provider], profile: Profile) -> dict[str, str]:
        fields = cls.credential_fields
        if not fields:
            return {}  # e.g. Local: never touch the keyring
        required = [f.key for f in fields if not f.optional]
        try:
            values = self.credentials.get(profile.provider, profile.name)
        except NoKeyringError:
            # Only a computer with no secure keyring at all goes on without one (a named AWS profile,
            # `az login`); a keyring that is locked or failed to answer is an error, never "nothing
            # stored": the provider would otherwise fall back to ambient credentials, or say the
            # secret is missing while it is there (issue 28).
            if required:
                raise
            log.info("no keyring for optional credentials of %s/%s", profile.provider, profile.name)
            return {}
        if self.machine_identity:
            return values  # the machine's identity signs in instead; the plugin says so when it cannot
        missing = [k for k in required if not values.get(k)]
        if missing:
            raise AuthError(
                f"no credentials stored for {profile.provider}/{profile.name} (missing: {', '.join(missing)})",
                hint=f"run `workbench credentials set {profile.provider} {profile.name} --stdin`",
            )
        return values

    def forget(self, profile_name: str) -> None:
        """Drop a cached provider (after its profile or credentials changed).

        A build of that profile still in progress is not cached when it ends, and later callers
        start a new build instead of waiting for it.
        """
        with self._lock:
            self._providers.pop(profile_name, None)
            self._building.pop(profile_name, None)
            self._generation[profile_name] = self._generation.get(profile_name, 0) + 1
