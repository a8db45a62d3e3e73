"""Crash mid-launch on Azure: the real `workbench launch` is SIGKILLed at 23 points against the ARM server.

Points: right after the ARM server carried out the Nth request of the launch (sign-in, SKUs,
usages, the resource group's look-up and creation, NSG, VNet, public IP, NIC, the refused and
the accepted VM PUT, its operation status, the disk PATCH, the guard's role assignment, the
auto-shutdown schedule, the group's tag update) — a hook around our test server's dispatcher
kills the process before the answer goes out — plus the launcher's own crash points
(``WORKBENCH_CRASH_AT``).  After the crashes `workbench status` must show every VM that exists under
its launch, and `workbench down --all` must leave no resource group of ours (checked in the server).

Each launch of a batch has its own profile and subscription (so its requests are counted apart)
and they all run at once on one store.  Needs the keyring (the client secret lives only there):
`make test` provides a private Secret Service.
"""

from __future__ import annotations

import pytest

from crash_harness import CORE_POINTS, Crash, sigkill_launches, status_then_down_all
from reltools import ArmHook, Killer, needs_secret_service, unique

#: the Nth request of a launch against the ARM server (1 = the OpenID configuration, 2 = the token, …)
API_POINTS = [1, 2, 3, 4, 5, 6, 7, 9, 10, 13, 16, 18, 19, 21, 22, 23, 24, 25, 26, 27]
ALL_POINTS: list[int | str] = [*API_POINTS, *CORE_POINTS]
BATCHES = [ALL_POINTS[i::4] for i in range(4)]

pytestmark = [needs_secret_service]  # the keyring marker (tests/support/secret_service.py)


def _crash(hook: ArmHook, wbhome, point: int | str, acct, profile: str) -> Crash:
    if not isinstance(point, int):
        return Crash(point, dict(wbhome.env), ["--profile", profile])
    killer = Killer(point)

    def on_call(method: str, path: str, status: int) -> None:
        if not killer.fired.is_set() and killer.seen(f"{method} {path}"):
            killer.kill()

    return Crash(point, dict(wbhome.env), ["--profile", profile], killer,
                 [hook.add((acct.subscription, acct.tenant), on_call)])


@pytest.mark.timeout(150)
@pytest.mark.parametrize("batch", range(len(BATCHES)), ids=lambda b: f"batch{b}")
def test_sigkill_at_each_point_then_status_shows_all_and_down_all_leaves_nothing(wbhome, arm, batch):
    hook = ArmHook.on(arm)
    prefix = unique("arm") + "-"  # keyring entries are shared by the parallel test workers: unique names
    accounts = [arm.new_account() for _ in BATCHES[batch]]
    try:
        wbhome.add_azure_profiles(arm, accounts, prefix)
        crashes = [_crash(hook, wbhome, point, accounts[i], f"{prefix}{i}")
                   for i, point in enumerate(BATCHES[batch])]
        sigkill_launches(wbhome, wbhome.spec("crashy", gpu="T4:1"), crashes)

        vms = {g["tags"]["workbench:launch"]: g["name"] for acct in accounts for g in arm.groups(acct.subscription)
               if arm.vm(acct.subscription, g["name"]) is not None}
        assert vms, "at least the points after the VM PUT leave a machine"
        status_then_down_all(wbhome, {lid: set() for lid in vms}, len(vms),
                             lambda: {"resource groups": [g["name"] for acct in accounts
                                                          for g in arm.groups(acct.subscription)]})
    finally:
        from workbench.core.providers.credentials import CredentialStore

        for i in range(len(accounts)):
            CredentialStore().delete("azure", f"{prefix}{i}")
