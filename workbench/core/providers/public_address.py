"""This computer's public address, for the SSH rule of a launched machine (the one lookup every cloud uses).

Cloud plugins open SSH (22/tcp) only to the address this computer is seen from, unless the profile
names a range (``ssh_cidr``).  That address is asked from a "what is my IP" service that answers with
the bare address as text (``https://checkip.amazonaws.com`` by default; a profile may name another:
its ``checkip_url`` setting).

The answer is cached per URL for :data:`TTL_S` seconds (a launch of several machines, or several
launches in a row, ask once); a failure is not cached, the next launch asks again.

Threading: safe from any thread (the cache is guarded by a lock; the request runs outside it).
Blocks for up to ``timeout`` seconds.  Failure: ConfigError naming the cause (never a traceback) with
the hint to set the profile's ``ssh_cidr``.
"""

from __future__ import annotations

import ipaddress
import threading
import time
import urllib.request

from workbench.core.domain.errors import ConfigError

DEFAULT_URL = "https://checkip.amazonaws.com"
TTL_S = 600.0
TIMEOUT_S = 3.0

_lock = threading.Lock()
_cache: dict[str, tuple[float, str]] = {}


def _ask(url: str, timeout: float) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as answer:  # noqa: S310 - https by default, http in tests
        return answer.read(64).decode("ascii", "replace").strip()


def public_cidr(url: str = DEFAULT_URL, timeout: float = TIMEOUT_S, *, ttl: float = TTL_S,
                clock=time.monotonic) -> str:
    """This computer's public address as a single-address range: ``203.0.113.7/32`` (or ``/128``)."""
    now = clock()
    with _lock:
        hit = _cache.get(url)
    if hit is not None and now - hit[0] < ttl:
        return hit[1]
    try:
        addr = ipaddress.ip_address(_ask(url, timeout))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot find this computer's public address to limit SSH ({type(exc).__name__})",
                          hint="set the profile's ssh_cidr setting (e.g. 203.0.113.7/32)") from None
    cidr = f"{addr}/{addr.max_prefixlen}"
    with _lock:
        _cache[url] = (now, cidr)
    return cidr


def forget() -> None:
    """Drop the cached answers (the network changed, or a test wants a fresh lookup)."""
    with _lock:
        _cache.clear()
