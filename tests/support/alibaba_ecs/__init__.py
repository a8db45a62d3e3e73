"""An Alibaba Cloud ECS + VPC + STS + BSS RPC test server for the Alibaba plugin (see :mod:`.server`).

:func:`shared_server` gives every test in this process the same running server (started on
first use, stopped at exit); tests isolate themselves through their own account
(``server.new_account()``: an AccessKey and its own resources and knobs).
"""

from __future__ import annotations

import atexit
import threading

from .server import AlibabaServer, Fault, Hold, Seen
from .state import Account

__all__ = ["Account", "AlibabaServer", "Fault", "Hold", "Seen", "profile_for", "shared_server"]

_lock = threading.Lock()
_server: AlibabaServer | None = None


def shared_server() -> AlibabaServer:
    global _server
    with _lock:
        if _server is None:
            _server = AlibabaServer().start()
            atexit.register(_server.stop)
        return _server


def profile_for(server: AlibabaServer, account: Account, name: str = "alibaba-test", region: str = "cn-hangzhou",
                **settings: str):
    """A workbench Profile of the test cloud for ``account`` (fast polling, tiny back-off).

    The AccessKey secret is not in it: pass ``{"access_key_id": account.access_key_id,
    "access_key_secret": account.secret}`` as the provider's secrets.
    """
    from workbench.core.domain.models import Profile

    base = {"endpoint": server.endpoint, "protocol": "http", "regions": region, "ssh_cidr": "203.0.113.7/32",
            "poll_s": "0.02", "retry_backoff_s": "0.01", "retry_total": "3", "read_timeout": "20",
            "connect_timeout": "2", "terminate_timeout_s": "20", "launch_timeout_s": "20"}
    base.update(settings)
    return Profile(name=name, provider="alibaba", region=region, settings=base)
