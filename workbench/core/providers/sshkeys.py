"""The install's SSH key pair: the one key every launched machine trusts.

Where it lives: ``<data dir>/ssh/id_ed25519`` (OpenSSH private key format,
mode 0600, folder 0700) with ``id_ed25519.pub`` beside it.  A cloud whose key
import accepts RSA keys only (Alibaba Cloud's ImportKeyPair) asks for the RSA
pair instead (``key_type="rsa"``: ``id_rsa``, 3072 bits) and marks its
instances with ``extra["ssh_key_type"] = "rsa"``; :func:`keypair_for` picks the
pair an instance trusts.  A file, not the
keyring, because the user's own ``ssh`` / VS Code Remote-SSH must be able to
use it (``ssh -i`` and the ``IdentityFile`` of the app's config include need
a path), and it unlocks only machines this app created and tears down.  It is
never written anywhere else nor logged.

Threading: safe from any thread; creation is guarded by a lock in this
process and, across processes, by an exclusive create (O_EXCL) of the private
key and an atomic rename of the public one (a reader never sees it half written).

Failure rules: ConfigError when the folder cannot be written or an existing
key cannot be read.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from workbench.core.domain.errors import ConfigError

KEY_NAME = "id_ed25519"
KEY_NAMES = {"ed25519": "id_ed25519", "rsa": "id_rsa"}
RSA_BITS = 3072
_lock = threading.Lock()


@dataclass(frozen=True)
class KeyPair:
    private_path: Path
    public_path: Path
    public_openssh: str  # "ssh-ed25519 AAAA… workbench-<install id>"

    @property
    def fingerprint(self) -> str:
        """SHA256 fingerprint as ssh-keygen -l prints it."""
        import base64
        import hashlib

        blob = base64.b64decode(self.public_openssh.split()[1])
        return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def key_dir(data_dir: Path) -> Path:
    return data_dir / "ssh"


def ensure_keypair(data_dir: Path, comment: str = "workbench", key_type: str = "ed25519") -> KeyPair:
    """The install's key pair of ``key_type`` ("ed25519" or "rsa"), generated on first use."""
    if key_type not in KEY_NAMES:
        raise ConfigError(f"unknown SSH key type {key_type!r}", hint=f"use one of {', '.join(KEY_NAMES)}")
    folder = key_dir(data_dir)
    name = KEY_NAMES[key_type]
    private, public = folder / name, folder / f"{name}.pub"
    with _lock:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            os.chmod(folder, 0o700)
            if not private.exists():
                _generate(private, key_type)
            if not public.exists():
                _write_public(public, f"{_public_from_private(private)} {comment}\n")
            text = public.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(
                f"cannot prepare the app's SSH key in {folder}: {exc.strerror or exc}",
                hint="check that the workbench data folder is writable",
            ) from exc
    return KeyPair(private, public, text)


def keypair_for(data_dir: Path, extra: object = None) -> KeyPair:
    """The pair an instance trusts: ``extra["ssh_key_type"]`` (an Instance's extra), ed25519 by default."""
    key_type = "ed25519"
    if isinstance(extra, dict) or hasattr(extra, "get"):
        key_type = str(extra.get("ssh_key_type") or "ed25519")  # type: ignore[union-attr]
    return ensure_keypair(data_dir, key_type=key_type if key_type in KEY_NAMES else "ed25519")


def _generate(private: Path, key_type: str = "ed25519") -> None:
    from cryptography.hazmat.primitives import serialization

    if key_type == "rsa":
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=RSA_BITS)
    else:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )
    tmp = private.with_name(private.name + f".tmp{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    try:
        os.link(tmp, private)  # fails if another process made one meanwhile: keep theirs
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)


def _write_public(public: Path, line: str) -> None:
    """Write the public key whole or not at all: another process that finds the file reads all of it
    (written in place, a launch beside it read it empty and sent AWS an empty key: InvalidKeyPair.Format)."""
    tmp = public.with_name(public.name + f".tmp{os.getpid()}.{threading.get_ident()}")
    try:
        tmp.write_text(line, encoding="utf-8")
        os.replace(tmp, public)
    finally:
        tmp.unlink(missing_ok=True)


def _public_from_private(private: Path) -> str:
    from cryptography.hazmat.primitives import serialization

    try:
        key = serialization.load_ssh_private_key(private.read_bytes(), password=None)
    except ValueError as exc:
        raise ConfigError(f"the app's SSH key {private} is unreadable", hint="move it away; a new one is made") from exc
    return key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
