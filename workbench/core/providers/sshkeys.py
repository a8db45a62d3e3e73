"""The install's SSH key pair: the one key every launched machine trusts.

Where it lives: ``<data dir>/ssh/id_ed25519`` (OpenSSH private key format,
mode 0600, folder 0700) with ``id_ed25519.pub`` beside it.  A file, not the
keyring, because the user's own ``ssh`` / VS Code Remote-SSH must be able to
use it (``ssh -i`` and the ``IdentityFile`` of the app's config include need
a path), and it unlocks only machines this app created and tears down.  It is
never written anywhere else nor logged.

Threading: safe from any thread; creation is guarded by a lock in this
process and by an exclusive create (O_EXCL) across processes.

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


def ensure_keypair(data_dir: Path, comment: str = "workbench") -> KeyPair:
    """The install's key pair, generated on first use."""
    folder = key_dir(data_dir)
    private, public = folder / KEY_NAME, folder / f"{KEY_NAME}.pub"
    with _lock:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            os.chmod(folder, 0o700)
            if not private.exists():
                _generate(private)
            if not public.exists():
                public.write_text(f"{_public_from_private(private)} {comment}\n", encoding="utf-8")
            text = public.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(
                f"cannot prepare the app's SSH key in {folder}: {exc.strerror or exc}",
                hint="check that the workbench data folder is writable",
            ) from exc
    return KeyPair(private, public, text)


def _generate(private: Path) -> None:
    from cryptography.hazmat.primitives import serialization
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


def _public_from_private(private: Path) -> str:
    from cryptography.hazmat.primitives import serialization

    try:
        key = serialization.load_ssh_private_key(private.read_bytes(), password=None)
    except ValueError as exc:
        raise ConfigError(f"the app's SSH key {private} is unreadable", hint="move it away; a new one is made") from exc
    return key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
