"""The ``~/.ssh/config`` include file the app writes, so ``ssh <name>`` and VS Code Remote-SSH just work.

The file is ``<data dir>/ssh/config``; the app never edits ``~/.ssh/config``
itself.  The user adds one line at its top (:func:`include_line`)::

    Include "/home/me/.local/share/cloud-gpu-workbench/ssh/config"

Each machine gets a ``Host`` block named by its launch id (and its instance name
when that is unique), with HostName, User, Port, the app's IdentityFile, the
app's known_hosts as UserKnownHostsFile, and a HostKeyAlias matching the app's
known_hosts entry; ``StrictHostKeyChecking accept-new`` is the app's own rule
(pinned or first-use keys, a changed key refused).

Threading: :func:`update` rewrites the file atomically under a lock; entries live
in a JSON side file so a CLI and the GUI can both add and remove machines.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Iterable

from workbench.core.domain.models import Instance
from workbench.core.remote.connection import DEFAULT_USER
from workbench.core.remote.hostkeys import host_alias, known_hosts_path

CONFIG = "config"
_ENTRIES = "config.json"
_lock = threading.Lock()
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def config_path(data_dir: Path) -> Path:
    return data_dir / "ssh" / CONFIG


def include_line(data_dir: Path) -> str:
    """The one line to put at the top of ``~/.ssh/config`` (quoted: data folders may contain spaces)."""
    return f'Include "{config_path(data_dir)}"'


def host_names(inst: Instance) -> list[str]:
    """Names ``ssh`` accepts for ``inst``: its launch id (+ instance id when a launch has several), its name.

    A node of a multi-node launch other than the head is ``<launch id>-node<rank>`` only.
    """
    rank = inst.extra.get("node_rank")
    if isinstance(rank, int) and rank > 0:
        return [_SAFE.sub("-", f"{inst.launch_id}-node{rank}")]
    names = [_SAFE.sub("-", inst.launch_id)]
    if inst.name and _SAFE.sub("-", inst.name) not in names:
        names.append(_SAFE.sub("-", inst.name))
    return names


def entry(inst: Instance, data_dir: Path) -> dict[str, str | int]:
    from workbench.core.providers.sshkeys import keypair_for

    return {"names": host_names(inst), "host": inst.host or "", "user": str(inst.extra.get("ssh_user") or DEFAULT_USER),
            "port": int(inst.extra.get("ssh_port") or 22), "alias": host_alias(inst.provider, inst.instance_id),
            "key": str(keypair_for(data_dir, inst.extra).private_path), "known_hosts": str(known_hosts_path(data_dir)),
            "instance": f"{inst.provider}/{inst.profile}/{inst.instance_id}", "launch_id": inst.launch_id}


def _q(value: str) -> str:
    return f'"{value}"' if re.search(r"\s", value) else value


def render(entries: Iterable[dict]) -> str:
    entries = list(entries)
    counts: dict[str, int] = {}
    for e in entries:
        for n in e["names"]:
            counts[n] = counts.get(n, 0) + 1
    out = ["# Written by Cloud GPU Workbench; rewritten whenever machines come and go. Do not edit.",
           "# Use it by adding this line at the top of ~/.ssh/config:",
           f"#   Include {_q(str(Path(entries[0]['known_hosts']).parent / CONFIG)) if entries else '<this file>'}",
           ""]
    for e in entries:
        names = [n for i, n in enumerate(e["names"]) if i == 0 or counts[n] == 1]  # a shared name would be ambiguous
        out += [f"# {e['instance']}",
                f"Host {' '.join(names)}",
                f"    HostName {e['host']}",
                f"    User {e['user']}",
                f"    Port {e['port']}",
                f"    IdentityFile {_q(e['key'])}",
                "    IdentitiesOnly yes",
                f"    UserKnownHostsFile {_q(e['known_hosts'])}",
                f"    HostKeyAlias {e['alias']}",
                "    StrictHostKeyChecking accept-new",
                "    ServerAliveInterval 30",
                ""]
    return "\n".join(out)


def update(data_dir: Path, add: Iterable[Instance] = (), remove_launches: Iterable[str] = ()) -> Path:
    """Add (or refresh) machines that have an address, drop those of finished launches; returns the file."""
    folder = data_dir / "ssh"
    with _lock:
        folder.mkdir(parents=True, exist_ok=True)
        side = folder / _ENTRIES
        try:
            entries = json.loads(side.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            entries = []
        gone = set(remove_launches)
        fresh = {f"{i.provider}/{i.profile}/{i.instance_id}": entry(i, data_dir) for i in add if i.host}
        entries = [e for e in entries if e.get("launch_id") not in gone and e.get("instance") not in fresh]
        entries += list(fresh.values())
        for path, text in ((side, json.dumps(entries, indent=1)), (folder / CONFIG, render(entries))):
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
    return folder / CONFIG


def ssh_argv(inst: Instance, data_dir: Path) -> list[str] | None:
    """``ssh`` arguments that use the app's key and known_hosts (None without an address).

    Pinned host keys from the instance are written to the app's known_hosts first, so the
    user's ssh checks them even before the app itself connected.
    """
    if not inst.host:
        return None
    from workbench.core.providers.sshkeys import keypair_for
    from workbench.core.remote.hostkeys import KnownHosts, parse_pins

    alias = host_alias(inst.provider, inst.instance_id)
    pins = parse_pins(inst.extra.get("host_keys"))
    kh = KnownHosts(known_hosts_path(data_dir))
    if pins and sorted(kh.lookup(alias)) != sorted(pins):
        kh.verify(alias, pins[0], pins, inst.name or inst.instance_id)  # records the pins
    argv = ["ssh", "-i", str(keypair_for(data_dir, inst.extra).private_path), "-o", "IdentitiesOnly=yes",
            "-o", f"UserKnownHostsFile={known_hosts_path(data_dir)}", "-o", f"HostKeyAlias={alias}",
            "-o", "StrictHostKeyChecking=accept-new"]
    port = int(inst.extra.get("ssh_port") or 22)
    if port != 22:
        argv += ["-p", str(port)]
    return argv + [f"{inst.extra.get('ssh_user') or DEFAULT_USER}@{inst.host}"]
