"""Reading a profile's string settings as flags, bounded numbers, choices, region lists and the SSH
source range, with errors that name the key.

Plugins keep their own setting names; this is the one place that says what a true flag is, how a
bad number or choice is reported, what ``pricing`` may be and when an ``ssh_cidr`` is too wide.
Plain Python, any thread.
"""

from __future__ import annotations

import ipaddress
import math
import re

from typing import TYPE_CHECKING

from workbench.core.domain.errors import ConfigError

if TYPE_CHECKING:
    from workbench.core.domain.models import Instance

TRUE_WORDS = ("1", "true", "yes", "on")
#: the ``pricing`` setting: live prices with the price catalog as fallback, live only, or the catalog only
PRICING_MODES = ("auto", "live", "snapshot")


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


def choice(profile: str, key: str, raw: str | None, allowed: tuple[str, ...]) -> str:
    """``raw`` (trimmed, lower case) when it is one of ``allowed``; ``allowed[0]`` when empty; ConfigError otherwise."""
    value = (raw or allowed[0]).strip().lower()
    if value not in allowed:
        raise ConfigError(f"profile {profile!r}: {key} must be one of {', '.join(allowed)}, not {raw!r}")
    return value


def region_list(profile: str, raw: str | None, default: str, pattern: re.Pattern[str], what: str,
                hint: str | None = None) -> tuple[str, ...]:
    """The ``regions`` setting: a comma list (trimmed, lower case, each once, in order), ``(default,)`` when
    empty; ConfigError "<id> is not <what>" for the first that does not match ``pattern``."""
    names = tuple(dict.fromkeys(r.strip().lower() for r in (raw or "").split(",") if r.strip())) or (default,)
    for name in names:
        if not pattern.match(name):
            raise ConfigError(f"profile {profile!r}: {name!r} is not {what}", hint=hint)
    return names


def ssh_cidr(profile: str, raw: str | None, anywhere: bool) -> str | None:
    """The ``ssh_cidr`` setting as a network ("203.0.113.7/32"), None when empty (the caller then asks
    :mod:`.public_address`); ConfigError for a malformed value, and for 0.0.0.0/0 (or ::/0) unless
    ``anywhere`` (``allow_ssh_from_anywhere=true``) confirms it."""
    text = (raw or "").strip()
    if not text:
        return None
    try:
        net = ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise ConfigError(f"profile {profile!r}: ssh_cidr {text!r} is not an address or network",
                          hint="e.g. 203.0.113.7/32 (your address) or 10.0.0.0/8") from None
    if net.prefixlen == 0 and not anywhere:
        raise ConfigError(f"profile {profile!r}: ssh_cidr {net} opens SSH to the whole internet",
                          hint="use your own address (x.x.x.x/32), or set allow_ssh_from_anywhere=true to confirm")
    return str(net)


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
