"""Many processes on one Secret Service: readers of a profile's secret while others rewrite it and other profiles'.

Run inside a Secret Service of its own (tests/reliability/test_keyring_stress.py starts it with
scripts/with-secret-service.sh), so that if the daemon falls over, only this run sees it::

    python tests/support/keyring_stress.py --seconds 12

Every process uses :class:`~workbench.core.providers.credentials.CredentialStore`, the app's own
path to the keyring (``--stock`` makes it use keyring's stock Secret Service backend, as the app
did before issue 28, to show the difference).  Roles, each a process of its own:

* ``reader``: one store (one connection) reading profile A in a loop, as the app does;
* ``churn``: a new store for every read, as a short-lived CLI process does (a new D-Bus
  connection, registered anew by the daemon, each time);
* ``rewriter``: rewrites A's secret with a new value from a known set;
* ``writer``: rewrites profile B's secret;
* ``deleter``: creates and deletes profiles of its own.

Prints one JSON object: per role the counts of ``ok``/``none``/``unknown`` (a value never written)
and of each error type, and whether the daemon that answered at the start still answers at the end
(its process id, asked from the bus).  Exit status 0 when nothing but ``ok`` was seen, 1 otherwise.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import queue
import sys
import time
from typing import Any

PROVIDER = "stress"
VALUES = [f"value-{i}" for i in range(8)]  # every value A ever holds: a read of anything else is wrong
ROLES = ("reader", "churn", "churn", "rewriter", "writer", "deleter")


def _store(stock: bool) -> Any:
    from workbench.core.providers.credentials import CredentialStore

    if not stock:
        return CredentialStore()

    class StockStore(CredentialStore):
        """The store as it was before issue 28: keyring's backend as keyring chose it, not swapped."""

        def _raw_backend(self) -> Any:
            import keyring

            return keyring.get_keyring()

    return StockStore()


def daemon_pid() -> int | None:
    """The process id of the Secret Service's owner on the session bus, or None if none answers."""
    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    bus = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus")
    with open_dbus_connection("SESSION") as conn:
        reply = conn.send_and_get_reply(
            new_method_call(bus, "GetConnectionUnixProcessID", "s", ("org.freedesktop.secrets",)), timeout=10)
    return reply.body[0] if reply.body and isinstance(reply.body[0], int) else None


def _error(exc: BaseException) -> str:
    return f"error {type(exc).__name__}: {str(exc)[:160]}"


def run_role(role: str, index: int, seconds: float, stock: bool, out: Any) -> None:
    counts: collections.Counter[str] = collections.Counter()
    end = time.monotonic() + seconds
    store = _store(stock)
    n = 0
    while time.monotonic() < end:
        n += 1
        try:
            if role in ("reader", "churn"):
                if role == "churn":
                    _tally(store, counts)
                    store = _store(stock)
                got = store.get(PROVIDER, "A")
                value = got.get("secret")
                counts["ok" if value in VALUES else "none" if not got else "unknown"] += 1
            elif role == "rewriter":
                store.set(PROVIDER, "A", {"secret": VALUES[n % len(VALUES)]})
                counts["ok"] += 1
            elif role == "writer":
                store.set(PROVIDER, "B", {"secret": f"b-{n}"})
                counts["ok"] += 1
            else:
                name = f"D{index}-{n % 3}"
                store.set(PROVIDER, name, {"secret": "d"})
                counts["ok" if store.delete(PROVIDER, name) else "none"] += 1
        except Exception as exc:  # noqa: BLE001 - every failure is counted, none ends the run
            counts[_error(exc)] += 1
    _tally(store, counts)
    out.put((f"{role}-{index}", dict(counts)))


def _tally(store: Any, counts: collections.Counter[str]) -> None:
    """Add what the backend absorbed (handshake tries the daemon refused, operations retried)."""
    backend = getattr(store, "_backend", None)
    for name in ("handshake_refusals", "retries"):
        counts[f"absorbed {name}"] += getattr(backend, name, 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--stock", action="store_true", help="keyring's stock Secret Service backend")
    args = parser.parse_args(argv)

    before = daemon_pid()
    _store(args.stock).set(PROVIDER, "A", {"secret": VALUES[0]})
    out: Any = mp.get_context("fork").Queue()
    procs = [mp.get_context("fork").Process(target=run_role, args=(role, i, args.seconds, args.stock, out))
             for i, role in enumerate(ROLES)]
    for proc in procs:
        proc.start()
    results: dict[str, dict[str, int]] = {}
    deadline = time.monotonic() + args.seconds + 30
    while len(results) < len(procs) and time.monotonic() < deadline:
        try:
            name, counts = out.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            break
        results[name] = counts
    for i, (role, proc) in enumerate(zip(ROLES, procs)):
        if f"{role}-{i}" not in results:  # stuck in a call the service never answers (an unlock prompt)
            results[f"{role}-{i}"] = {"hung": 1}
        proc.join(0 if proc.exitcode is not None else 5)
        if proc.is_alive():
            proc.kill()
            proc.join(10)
    try:
        after = daemon_pid()
    except Exception:  # noqa: BLE001 - a bus without the service is the answer
        after = None
    bad = sum(n for counts in results.values() for key, n in counts.items()
              if key != "ok" and not key.startswith("absorbed "))
    report = {"roles": results, "daemon_before": before, "daemon_after": after,
              "daemon_survived": before is not None and before == after, "bad": bad}
    print(json.dumps(report, sort_keys=True))
    return 0 if bad == 0 and report["daemon_survived"] else 1


if __name__ == "__main__":
    sys.exit(main())
