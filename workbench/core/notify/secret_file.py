"""The controller's copy of a profile's channel: one JSON file, mode 0600, holding the config and secrets.

The controller machine has no keyring, so the app writes this file (and copies it over SSH) when it hands
work to the controller.  :func:`write_secret_file` creates the file 0600 *before* any byte is written
(a temporary file opened with ``O_EXCL`` in the same folder, then renamed over the target: a reader sees
the old file or the whole new one, never a part); :func:`load_secret_file` refuses a file that others may
read or that another user owns.  Errors name the file, never its content.  Any thread.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from workbench.core.domain.errors import ConfigError
from workbench.core.notify.channel import ChannelConfig, ChannelSecrets

VERSION = 1
MODE = 0o600


@dataclass(frozen=True)
class SecretFile:
    """What a secret file holds."""

    profile: str
    config: ChannelConfig
    secrets: ChannelSecrets


def write_secret_file(path: Path, profile: str, config: ChannelConfig, secrets: ChannelSecrets) -> Path:
    """Write the channel of ``profile`` to ``path`` (mode 0600, atomically); returns ``path``.

    ConfigError when the folder does not exist or cannot be written."""
    path = Path(path)
    data = json.dumps({"version": VERSION, "profile": profile, "config": config.to_json(),
                       "secrets": secrets.to_json()}, indent=2, sort_keys=True).encode("utf-8")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(tmp, flags, MODE)
    except FileExistsError:
        tmp.unlink()  # left by a writer of this pid that died; O_EXCL again below
        fd = os.open(tmp, flags, MODE)
    except OSError as exc:
        raise ConfigError(f"cannot write the notification file {path}: {exc.strerror}") from None
    try:
        os.fchmod(fd, MODE)  # the umask can only have taken bits away; say it outright
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"cannot write the notification file {path}: {exc.strerror}") from None
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return path
    try:
        os.fsync(dir_fd)  # the rename itself survives a crash
    except OSError:
        pass
    finally:
        os.close(dir_fd)
    return path


def load_secret_file(path: Path) -> SecretFile:
    """Read a file :func:`write_secret_file` wrote.

    ConfigError when it is missing, readable by group or others, owned by another user, or not what
    that function writes (the message never quotes it)."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ConfigError(f"no notification file at {path}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read the notification file {path}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"the notification file {path} is not a regular file")
        if st.st_mode & 0o077:
            raise ConfigError(f"the notification file {path} may be read by others "
                              f"(mode {stat.S_IMODE(st.st_mode):04o}); it is not used",
                              hint=f"chmod 600 {path}, or write it again")
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            raise ConfigError(f"the notification file {path} belongs to another user; it is not used")
        raw = handle.read()
    data = None
    try:
        data = json.loads(raw.decode("utf-8"))
    except ValueError:
        pass
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("config"), dict) \
            or not isinstance(data.get("secrets"), dict):
        raise ConfigError(f"the notification file {path} is not one this version writes",
                          hint="write it again from the app")
    where = f"the notification file {path}"
    return SecretFile(str(data.get("profile") or ""), ChannelConfig.from_json(data["config"], where),
                      ChannelSecrets.from_json(data["secrets"], where))
