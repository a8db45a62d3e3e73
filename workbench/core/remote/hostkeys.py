"""The app's own known_hosts: which host key each launched machine must present.

File: ``<data dir>/ssh/known_hosts`` in OpenSSH format, so the user's own ``ssh``
(through the app's config include, ``UserKnownHostsFile``) trusts exactly what the
app trusts.  Entries are named by a *host key alias* per instance
(``<instance id>.<provider>.workbench``), never by IP address: clouds hand the same
public IP to another machine later, and that must not look like an attack (nor be
trusted as the old machine).

Rules, in order:

1. Pins: when the provider read the machine's host keys from its console output
   (``Instance.extra["host_keys"]``), only those keys are accepted, and they replace
   whatever the file held for that alias.
2. Trust on first use: no pins and nothing recorded → the key is recorded.
3. A recorded key of the same type that differs → :class:`HostKeyError` (refused).

Threading: writes are serialised by a lock in this process and an atomic replace of
the file (a concurrent CLI and GUI may both add entries: each re-reads before writing).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import threading
from pathlib import Path
from typing import Any, Iterable

from workbench.core.domain.errors import AuthError

KNOWN_HOSTS = "known_hosts"
#: key types we accept, strongest first (the order offered to the server)
KEY_TYPES = ("ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
             "rsa-sha2-512", "rsa-sha2-256", "ssh-rsa")
_PUBLIC_TYPES = {"ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-rsa"}
_ALIAS_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_lock = threading.Lock()

HostKey = tuple[str, str]  # (key type, base64 blob)


class HostKeyError(AuthError):
    """The machine presented a host key other than the one pinned or recorded: refused."""

    kind = "host_key"


def known_hosts_path(data_dir: Path) -> Path:
    return data_dir / "ssh" / KNOWN_HOSTS


def host_alias(provider: str, instance_id: str) -> str:
    """The known_hosts name of one instance (also ssh's ``HostKeyAlias``)."""
    return _ALIAS_SAFE.sub("-", f"{instance_id}.{provider}.workbench").strip("-")


def fingerprint(key: HostKey) -> str:
    """SHA256 fingerprint, as ``ssh-keygen -l`` prints it."""
    digest = hashlib.sha256(base64.b64decode(key[1])).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def parse_pins(raw: Any) -> list[HostKey]:
    """Host keys from ``extra["host_keys"]``: a list of "type base64 [comment]" lines or one text.

    Console output often carries ``-----BEGIN SSH HOST KEY KEYS-----`` blocks with a
    comment after each key; lines that are not keys are ignored.
    """
    if not raw:
        return []
    items: Iterable[str] = [raw] if isinstance(raw, str) else (str(x) for x in raw)
    lines = [line for item in items for line in item.splitlines()]
    out: list[HostKey] = []
    for line in lines:
        parts = line.strip().split()
        if len(parts) >= 2 and parts[0] in _PUBLIC_TYPES and _is_b64(parts[1]):
            key = (parts[0], parts[1])
            if key not in out:
                out.append(key)
    return out


def _is_b64(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
        return True
    except ValueError:
        return False


def _matches(key_type: str, wanted: str) -> bool:
    """RSA keys are one key type ("ssh-rsa") whatever signature algorithm was negotiated."""
    rsa = {"ssh-rsa", "rsa-sha2-256", "rsa-sha2-512"}
    return key_type == wanted or (key_type in rsa and wanted in rsa)


class KnownHosts:
    """The app's known_hosts file (see the module docstring for the rules)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> list[tuple[str, str, str]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        out = []
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 3 and not line.startswith("#"):
                out.append((parts[0], parts[1], parts[2]))
        return out

    def _write(self, entries: list[tuple[str, str, str]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f"{KNOWN_HOSTS}.{os.getpid()}.{threading.get_ident()}.tmp")
        body = "".join(f"{a} {t} {b}\n" for a, t, b in entries)
        tmp.write_text("# Host keys of machines launched by Cloud GPU Workbench (names are HostKeyAlias values)\n"
                       + body, encoding="utf-8")
        os.replace(tmp, self.path)

    def lookup(self, alias: str) -> list[HostKey]:
        return [(t, b) for a, t, b in self._read() if a == alias]

    def key_types_for(self, alias: str, pins: list[HostKey]) -> list[str]:
        """Host key algorithms to offer the server: the pinned/recorded types first, else all."""
        known = [t for t, _ in (pins or self.lookup(alias))]
        if not known:
            return list(KEY_TYPES)
        algos = []
        for t in known:
            algos.extend(["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"] if t == "ssh-rsa" else [t])
        return list(dict.fromkeys(algos))

    def forget(self, alias: str) -> None:
        with _lock:
            entries = self._read()
            kept = [e for e in entries if e[0] != alias]
            if len(kept) != len(entries):
                self._write(kept)

    def keys(self, alias: str) -> list[HostKey]:
        """The keys recorded for ``alias`` (e.g. a login node's, pinned into the instances that reach it)."""
        with _lock:
            return [(t, b) for a, t, b in self._read() if a == alias]

    def verify(self, alias: str, key: HostKey, pins: list[HostKey], where: str) -> str:
        """Accept ``key`` for ``alias`` or raise :class:`HostKeyError`; returns "pinned", "known" or "new".

        ``where`` names the machine in messages ("train-3f2a1b (203.0.113.7:22)").
        """
        key_type, blob = key
        if pins:
            if not any(_matches(key_type, t) and b == blob for t, b in pins):
                raise HostKeyError(
                    f"the SSH host key of {where} ({fingerprint(key)}) is not one of the keys its cloud "
                    f"reported at boot: refusing to connect",
                    hint="someone may be intercepting the connection; if the machine was re-created, "
                         "wait for the new console output and try again")
            with _lock:
                entries = self._read()
                mine = [(t, b) for a, t, b in entries if a == alias]
                if sorted(mine) != sorted(pins):
                    self._write([e for e in entries if e[0] != alias] + [(alias, t, b) for t, b in pins])
            return "pinned"
        with _lock:
            entries = self._read()
            mine = [(t, b) for a, t, b in entries if a == alias]
            if not mine:
                self._write(entries + [(alias, "ssh-rsa" if key_type.startswith("rsa-") else key_type, blob)])
                return "new"
        if any(_matches(key_type, t) and b == blob for t, b in mine):
            return "known"
        old = next((k for k in mine if _matches(key_type, k[0])), mine[0])
        raise HostKeyError(
            f"the SSH host key of {where} has changed: it was {fingerprint(old)}, now {fingerprint(key)}; "
            f"refusing to connect",
            hint=f"someone may be intercepting the connection.  If you know the machine was re-created, "
                 f"delete the lines starting with '{alias}' from {self.path} and try again")
