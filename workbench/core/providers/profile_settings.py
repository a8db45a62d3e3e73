"""Reading a profile's string settings as flags and bounded numbers, with errors that name the key.

Plugins keep their own setting names; this is the one place that says what a
true flag is and how a bad number is reported.  Plain Python, any thread.
"""

from __future__ import annotations

import math

from typing import TYPE_CHECKING

from workbench.core.domain.errors import ConfigError

if TYPE_CHECKING:
    from workbench.core.domain.models import Instance

TRUE_WORDS = ("1", "true", "yes", "on")


def flag(raw: str | None) -> bool:
    """True for 1/true/yes/on (any case); anything else, or nothing, is False."""
    return str(raw or "").strip().lower() in TRUE_WORDS


def number(profile: str, key: str, raw: str | None, default: float, low: float, high: float) -> float:
    """``raw`` as a finite number in [low, high]; ``default`` when empty; ConfigError otherwise."""
    if raw is None or str(raw).strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not low <= value <= high:
        raise ConfigError(f"profile {profile!r}: {key} must be a number from {low:g} to {high:g}, not {raw!r}",
                          hint=f"edit the profile's settings: {key}={default:g}")
    return value


#: ``ssh_address`` hosts that name an address of each machine instead of one fixed place
ADDRESS_KEYWORDS = ("public", "private")


def ssh_address(profile: str, raw: str | None) -> tuple[str, int, str | None] | None:
    """The ``ssh_address`` setting: "[USER@]HOST[:PORT]" to reach every machine of the profile there
    (an SSH port forward, a bastion's local end), or None/"public" for the machine's own
    public address.  HOST may be the word ``private`` (each machine's private address: a VPN, Direct
    Connect, the app inside the VPC) or ``public`` (each one's public address), with a port when the
    machines' sshd listens elsewhere than 22.  ConfigError for a malformed value."""
    text = str(raw or "").strip()
    if not text or text.lower() == "public":
        return None
    user, _, rest = text.rpartition("@")
    host, sep, port = rest.rpartition(":") if rest.count(":") == 1 else (rest, "", "")
    if not sep:
        host, port = rest, "22"
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or any(c.isspace() for c in text) \
            or "@" in user:
        raise ConfigError(f"profile {profile!r}: ssh_address must be [USER@]HOST[:PORT], not {text!r}",
                          hint="e.g. ssh_address=127.0.0.1:2222 for a port forward, or remove it")
    if host.lower() in ADDRESS_KEYWORDS:
        host = host.lower()
    return host, int(port), user or None


def per_machine(where: tuple[str, int, str | None] | None) -> bool:
    """True when ``where`` reaches each machine at its own address (so it serves a multi-node launch)."""
    return where is None or where[0] in ADDRESS_KEYWORDS


def apply_ssh_address(inst: "Instance", where: tuple[str, int, str | None] | None) -> "Instance":
    """``inst`` reached through ``where`` (its ``host``, ``extra["ssh_port"]`` and, when given,
    ``extra["ssh_user"]``); unchanged for None or a machine that is not up.

    With a keyword host the port is also the one the machines' peers use (``extra["node_ssh_port"]``,
    for the inter-node SSH of a multi-node launch); a fixed host's port is the forward's, not theirs.
    """
    if where is None or not inst.state.active:
        return inst
    import dataclasses

    host, port, user = where
    extra = {**inst.extra, "ssh_port": port, "public_host": inst.host}
    if host == "public":
        host = inst.host or ""
    elif host == "private":
        host = str(inst.extra.get("private_ip") or "")
    if where[0] in ADDRESS_KEYWORDS:
        extra["node_ssh_port"] = port
    if user:
        extra["ssh_user"] = user
    return dataclasses.replace(inst, host=host or None, extra=extra)
