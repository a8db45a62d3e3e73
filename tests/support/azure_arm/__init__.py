"""An ARM-protocol test server for the Azure plugin (see :mod:`.server`).

:func:`shared_server` gives every test in this process the same running server
(started on first use, stopped at exit); tests isolate themselves through their
own account (``server.new_account()``: tenant, service principal, subscription).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from pathlib import Path

from .server import Account, ArmRequest, ArmServer, Fault, Seen, action_for

__all__ = ["Account", "ArmRequest", "ArmServer", "Fault", "Seen", "action_for", "profile_for", "shared_server"]

_lock = threading.Lock()
_server: ArmServer | None = None


def shared_server() -> ArmServer:
    """The process-wide server (HTTPS on 127.0.0.1, a fresh CA in a temp folder)."""
    global _server
    with _lock:
        if _server is None:
            folder = Path(tempfile.mkdtemp(prefix="arm-test-"))
            _server = ArmServer(folder).start()

            def stop(server: ArmServer = _server, path: Path = folder) -> None:
                server.stop()
                shutil.rmtree(path, ignore_errors=True)

            atexit.register(stop)
        return _server


def profile_for(server: ArmServer, account: Account, name: str = "azure-test", region: str = "eastus",
                **settings: str):
    """A workbench Profile of the custom cloud ``server`` for ``account`` (fast polling, tiny backoff).

    The client secret is not in it: pass ``{"client_secret": account.secret}`` as the provider's secrets.
    """
    from workbench.core.domain.models import Profile

    base = {
        "cloud": "custom", "arm_endpoint": server.url, "authority_host": server.url, "ca_bundle": server.ca_file,
        "prices_url": server.prices_url, "tenant_id": account.tenant, "client_id": account.client_id,
        "subscription_id": account.subscription, "regions": region, "ssh_cidr": "203.0.113.7/32",
        "polling_interval": "0", "retry_backoff": "0.01", "retry_total": "3", "read_timeout": "20",
    }
    base.update(settings)
    return Profile(name=name, provider="azure", region=region, settings=base)
