"""Container registry logins saved on this computer: ``workbench registry login HOST`` and a spec's
``registry_auth: {username: U, password: keyring}``.

* The password (or token) is one keyring entry of the credential store, under the username
  ``@registry/<host>`` (:data:`KEYRING_OWNER`; provider ids have no ``@``): ``{"username", "password"}``.
  One login per registry host, as ``docker login`` keeps one.
* Which hosts have a login, and as whom, is in ``registry_logins.json`` in the app's config folder (no secret):
  listing them, and the wizard's "use the password saved for HOST", never wake the keyring.  The keyring is
  written before the list, so the list never names a login whose password is missing.
* At launch (:func:`with_keyring_password`, in the launching process) the password becomes the launch secret
  :data:`~workbench.core.domain.models.REGISTRY_KEYRING_SECRET` and travels exactly as a launch secret does: in
  memory, then the job's 0600 env file, read by the per-job ``docker login --password-stdin`` (container.sh).
  A missing login is a ConfigError before anything is launched, naming the command to run.

Nothing secret is written to disk, the log or an error.  Blocks on the keyring; any thread.  Errors:
ConfigError (a bad host, no saved login), AuthError (keyring trouble, from the credential store).
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from workbench.core import applog, paths
from workbench.core.domain.errors import ConfigError
from workbench.core.domain.models import REGISTRY_KEYRING_SECRET, ContainerImage, JobSpec

if TYPE_CHECKING:
    from workbench.core.providers.credentials import CredentialStore

#: the credential store's "provider" part of the keyring username (``@registry/<host>``)
KEYRING_OWNER = "@registry"
INDEX_FILE = "registry_logins.json"
#: Docker Hub's other names: a login to any of them is the login of docker.io (what an image without a registry uses)
_HUB = {"docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com", "hub.docker.com"}
_HOST_RE = re.compile(r"^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:]+\])"
                      r"(?::[0-9]{1,5})?$")


def registry_host(text: str) -> str:
    """The registry host as logins are keyed: lower case, no scheme or path, Docker Hub's aliases as docker.io.

    Raises ConfigError for something that is not a host[:port].
    """
    host = text.strip().lower()
    for scheme in ("https://", "http://"):
        if host.startswith(scheme):
            host = host[len(scheme):]
    host = host.split("/", 1)[0]
    if host in _HUB:
        return "docker.io"
    if not host or not _HOST_RE.fullmatch(host):
        raise ConfigError(f"{text!r} is not a registry host", hint="give it as an image names it, e.g. "
                          "nvcr.io, ghcr.io, registry.example.com:5000 (docker.io for Docker Hub)")
    return host


@dataclass(frozen=True)
class RegistryLogin:
    """A saved login, without its password."""

    registry: str
    username: str
    saved_at: float

    def to_json(self) -> dict[str, Any]:
        return {"registry": self.registry, "username": self.username,
                "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.saved_at))}


class RegistryLogins:
    """The saved logins: the list in ``index`` (default: the app's config folder), passwords in ``credentials``
    (None: the list only — :meth:`list` and :meth:`saved`, which never ask the keyring)."""

    def __init__(self, credentials: "CredentialStore | None", index: Path | None = None) -> None:
        self.credentials = credentials
        self._index = index

    @property
    def index(self) -> Path:
        return self._index if self._index is not None else paths.config_dir() / INDEX_FILE

    def list(self) -> list[RegistryLogin]:
        """Every saved login, by host (read from the list alone: the keyring is not asked)."""
        return [RegistryLogin(h, str(v.get("username", "")), float(v.get("saved_at", 0)))
                for h, v in sorted(self._read().items())]

    def saved(self, registry: str) -> RegistryLogin | None:
        """The login saved for ``registry`` (from the list alone), None when there is none."""
        host = registry_host(registry)
        return next((login for login in self.list() if login.registry == host), None)

    def save(self, registry: str, username: str, password: str) -> RegistryLogin:
        """Save (replace) the login of ``registry``: the password into the keyring first, then the list."""
        host = registry_host(registry)
        if not username.strip():
            raise ConfigError("a registry login needs a user name", hint="--username USER")
        if not password:
            raise ConfigError(f"no password or token given for {host}")
        if "\n" in password or "\r" in password:
            raise ConfigError(f"the password or token for {host} spans several lines: give it on one line")
        applog.register_secret(password)
        assert self.credentials is not None
        self.credentials.set(KEYRING_OWNER, host, {"username": username.strip(), "password": password})
        login = RegistryLogin(host, username.strip(), time.time())
        data = self._read()
        data[host] = {"username": login.username, "saved_at": login.saved_at}
        self._write(data)
        return login

    def delete(self, registry: str) -> bool:
        """Forget the login of ``registry`` (keyring and list); False when none was saved."""
        host = registry_host(registry)
        data = self._read()
        listed = data.pop(host, None) is not None
        assert self.credentials is not None
        deleted = self.credentials.delete(KEYRING_OWNER, host)
        if listed:
            self._write(data)
        return listed or deleted

    def password(self, registry: str, username: str) -> str:
        """The saved password of ``username`` at ``registry``; ConfigError naming the command to run when there
        is none, or it is another user's."""
        host = registry_host(registry)
        assert self.credentials is not None
        values = self.credentials.get(KEYRING_OWNER, host)
        login = f"workbench registry login {host} --username {username}"
        if not values.get("password"):
            raise ConfigError(f"no password is saved for the registry {host}: the job spec takes it from the "
                              "keyring (registry_auth.password: keyring)", hint=f"save it first: {login}")
        if values.get("username") != username:
            raise ConfigError(f"the password saved for the registry {host} is {values.get('username')!r}'s, but the "
                              f"job spec logs in as {username!r}", hint=f"save {username}'s: {login}")
        applog.register_secret(values["password"])
        return values["password"]

    # -- the list (no secrets) ------------------------------------------------
    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.index.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        logins = data.get("registries") if isinstance(data, dict) else None
        return {str(k): dict(v) for k, v in logins.items() if isinstance(v, dict)} if isinstance(logins, dict) else {}

    def _write(self, logins: Mapping[str, Mapping[str, Any]]) -> None:
        path = self.index
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"registries": dict(logins)}, handle, indent=1, sort_keys=True)
        os.replace(tmp, path)


def keyring_login(image: ContainerImage | None) -> bool:
    """The image logs in with a password saved in the keyring (``registry_auth.password: keyring``)."""
    return image is not None and image.registry_auth is not None and image.registry_auth.from_keyring


def with_keyring_password(credentials: "CredentialStore", spec: JobSpec,
                          secret_env: Mapping[str, str] | None) -> dict[str, str]:
    """``secret_env`` plus, for a spec whose image logs in from the keyring, the saved password as the launch
    secret :data:`REGISTRY_KEYRING_SECRET` (unchanged when it is there already, or the spec needs none).

    Raises ConfigError (no saved login, another user's) before anything is launched; AuthError (keyring).
    """
    out = dict(secret_env or {})
    image = spec.image
    if not keyring_login(image) or out.get(REGISTRY_KEYRING_SECRET):
        return out
    assert image is not None and image.registry_auth is not None
    out[REGISTRY_KEYRING_SECRET] = RegistryLogins(credentials).password(image.registry, image.registry_auth.username)
    return out


def save_typed_login(credentials: "CredentialStore", spec: JobSpec, secret_env: Mapping[str, str]) -> bool:
    """Save the password typed for a launch's registry login ("Save for next time"); False when there is none
    to save (no login, or one from the keyring already)."""
    auth = spec.image.registry_auth if spec.image is not None else None
    if auth is None or auth.from_keyring or not secret_env.get(auth.password_secret):
        return False
    assert spec.image is not None
    RegistryLogins(credentials).save(spec.image.registry, auth.username, secret_env[auth.password_secret])
    return True
