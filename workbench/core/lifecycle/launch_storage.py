"""A launch's storage, before anything bills: its mounts checked, then its local folders uploaded.

Both faces run these: ``workbench launch`` checks (:func:`check_launch_storage`), shows the plan,
asks, then uploads (:func:`upload_launch_storage`); the GUI's launch, whose review page already
showed the checks, does both in one go on its worker (:func:`prepare_launch_storage`).  The checks
and the upload themselves are :mod:`workbench.core.storage.checks`.

Threading: everything blocks on the network (a worker thread); ``progress`` is called from the
upload's transfer threads.  Failure rules: a problem raises a WorkbenchError naming the mount and
nothing is launched; a cancelled upload raises ConfigError.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable

from workbench.core.storage.checks import MountCheck, StoragePlan, check_storage, upload_sources
from workbench.core.storage.upload import UploadProgress, UploadReport

if TYPE_CHECKING:
    from workbench.core.lifecycle.launcher import LaunchPlan
    from workbench.core.providers.accounts import Accounts

#: how an upload reports: the mount whose folder is going, and how far it is
MountProgress = Callable[[MountCheck, UploadProgress], None]


def _never() -> bool:
    return False


def check_launch_storage(accounts: "Accounts", lp: "LaunchPlan") -> StoragePlan:
    """The storage checks of ``lp``'s spec on its profile and offer (raises the first problem)."""
    return check_storage(accounts, lp.spec, lp.profile, lp.choice.offer)


def upload_launch_storage(accounts: "Accounts", lp: "LaunchPlan", plan: StoragePlan,
                          progress: MountProgress | None = None,
                          should_stop: Callable[[], bool] = _never) -> tuple["LaunchPlan", list[UploadReport]]:
    """Upload ``plan``'s local-folder sources; ``lp`` with the spec that names their buckets, and the reports."""
    if not plan.uploads:
        return lp, []
    by_index = {m.index: m for m in plan.uploads}
    report = None if progress is None else (lambda i, p: progress(by_index[i], p))
    spec, reports = upload_sources(accounts, lp.spec, plan, report, should_stop)
    return dataclasses.replace(lp, spec=spec), reports


def prepare_launch_storage(accounts: "Accounts", lp: "LaunchPlan", progress: MountProgress | None = None,
                           should_stop: Callable[[], bool] = _never) -> "LaunchPlan":
    """Check ``lp``'s mounts and upload its local folders: the plan to launch."""
    if not lp.spec.storage:
        return lp
    return upload_launch_storage(accounts, lp, check_launch_storage(accounts, lp), progress, should_stop)[0]
