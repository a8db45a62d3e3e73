"""The end of a cloud plugin's teardown: delete what the launches left, verify, and say what remains.

Every cloud's ``terminate`` ends alike: once the instances are gone, the launches' other resources
(network, firewall group, key pair, disks, addresses — found by tag through the plugin's own
leftovers listing) are deleted, listed again, and anything still listed is an error naming it, so
teardown retries and the user sees what bills.  The plugin gives the listing and the deletion (its
cloud's calls); :func:`sweep` gives the order, the wait for a cloud that deletes asynchronously,
and the messages.  :func:`still_running` and :func:`first_failure` are the two other messages of
a teardown that every plugin words the same.

Threading: the caller's worker; blocks while it lists, deletes and waits.  Failure rules: raises
TransientError (teardown retries), or the workbench error the plugin made of a failed deletion.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

from workbench.core.domain.errors import TransientError, WorkbenchError
from workbench.core.domain.models import Resource

#: what a plugin's deletion returns: the resources it could not delete, each with its exception
Failures = Sequence[tuple[Resource, BaseException]]


def cause(exc: BaseException) -> str:
    """A failed deletion in a few words: a workbench error's message, else the exception's type."""
    return exc.message if isinstance(exc, WorkbenchError) else type(exc).__name__


def sweep(region: str, list_left: Callable[[], list[Resource]], delete: Callable[[list[Resource]], Failures], *,
          cause_of: Callable[[BaseException], str] = cause, settle_s: float = 0.0, poll_s: float = 0.05,
          clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
    """Delete what ``list_left()`` finds, list again, raise TransientError naming what is still there.

    ``settle_s``: how long to wait, listing every ``poll_s``, while only things this sweep deleted are
    still listed (a cloud whose deletes finish later: Alibaba's vSwitches and VPCs); 0 does not wait.
    ``cause_of`` words the first failed deletion's exception for the message (default :func:`cause`).
    """
    found = list_left()
    failures = delete(found)
    remaining = list_left()
    deadline = clock() + settle_s
    deleted = {r.resource_id for r in found}
    while remaining and not failures and {r.resource_id for r in remaining} <= deleted and clock() < deadline:
        sleep(poll_s)
        remaining = list_left()
    if failures or remaining:
        names = ", ".join(f"{r.kind} {r.resource_id}" for r in remaining) or ", ".join(
            f"{r.kind} {r.resource_id}" for r, _ in failures)
        cause = f" ({cause_of(failures[0][1])})" if failures else ""
        raise TransientError(f"leftovers of the launch remain in {region}: {names}{cause}",
                             hint="teardown retries; the console link shows them")


def still_running(region: str, ids: Sequence[str], waited_s: float, doing: str) -> TransientError:
    """The error for instances still ``doing`` ("shutting down", "being released") after ``waited_s``."""
    return TransientError(f"{len(ids)} instance(s) in {region} were still {doing} after {waited_s:g} s: "
                          f"{', '.join(ids)}", hint="teardown checks again; run `workbench down` later if they remain")


def first_failure(failures: Failures, error_of: Callable[[Resource, BaseException], WorkbenchError]
                  ) -> WorkbenchError | None:
    """The error of the first failed deletion (``error_of`` makes it, naming the resource), saying how many
    more failed; None when none did."""
    if not failures:
        return None
    res, exc = failures[0]
    err = error_of(res, exc)
    more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
    return type(err)(err.message + more, err.hint)
