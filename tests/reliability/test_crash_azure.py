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

import signal
import time

import pytest

from reltools import ArmHook, Killer, needs_secret_service, unique

#: the Nth request of a launch against the ARM server (1 = the OpenID configuration, 2 = the token, …)
API_POINTS = [1, 2, 3, 4, 5, 6, 7, 9, 10, 13, 16, 18, 19, 21, 22, 23, 24, 25, 26, 27]
CORE_POINTS = ["launch:recorded", "launch:provider-returned", "launch:instances-stored"]
ALL_POINTS: list[int | str] = [*API_POINTS, *CORE_POINTS]
BATCHES = [ALL_POINTS[i::4] for i in range(4)]

pytestmark = [needs_secret_service]  # the keyring marker (tests/support/secret_service.py)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("batch", range(len(BATCHES)), ids=lambda b: f"batch{b}")
def test_sigkill_at_each_point_then_status_shows_all_and_down_all_leaves_nothing(wbhome, arm, batch):
    hook = ArmHook.on(arm)
    prefix = unique("arm") + "-"  # keyring entries are shared by the parallel test workers: unique names
    accounts, removers, procs = [], [], []
    spec = wbhome.spec("crashy", gpu="T4:1")
    try:
        accounts = [arm.new_account() for _ in BATCHES[batch]]
        wbhome.add_azure_profiles(arm, accounts, prefix)
        for i, point in enumerate(BATCHES[batch]):
            acct = accounts[i]
            env = dict(wbhome.env)
            killer: Killer | None = None
            if isinstance(point, int):
                killer = Killer(point)
                k = killer

                def on_call(method: str, path: str, status: int, k: Killer = k) -> None:
                    if not k.fired.is_set() and k.seen(f"{method} {path}"):
                        k.kill()

                removers.append(hook.add((acct.subscription, acct.tenant), on_call))
            else:
                env["WORKBENCH_CRASH_AT"] = point
            proc = wbhome.popen("launch", str(spec), "--profile", f"{prefix}{i}", "--yes", "--json", env=env)
            if killer is not None:
                killer.pid = proc.pid
            procs.append((point, proc, killer))
            time.sleep(0.3)
        for point, proc, killer in procs:
            try:
                rc = proc.wait(60)
            except Exception:  # noqa: BLE001
                proc.kill()
                proc.wait(10)
                raise AssertionError(f"{point}: the launch never reached its crash point") from None
            out, err = proc.communicate()
            assert rc == -signal.SIGKILL, f"{point}: rc {rc}\n{out}\n{err[-2000:]}"
            assert killer is None or killer.fired.wait(10), point  # set just after its kill: wait, not peek
    finally:
        for remove in removers:
            remove()
        for _point, proc, _killer in procs:  # a failed check above must not leave the others running
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=10)

    vms = {}
    for acct in accounts:
        for g in arm.groups(acct.subscription):
            if arm.vm(acct.subscription, g["name"]) is not None:
                vms[g["tags"]["workbench:launch"]] = g["name"]
    status = wbhome.json("status")
    shown = {launch["launch_id"] for launch in status["launches"]
             if any(i["billable"] for i in launch["instances"])}
    assert set(vms) <= shown, f"status misses {set(vms) - shown}"
    assert status["billable"] == len(vms)
    assert vms, "at least the points after the VM PUT leave a machine"

    report = wbhome.json("down", "--all", "--yes")
    assert report["clean"], report
    for acct in accounts:
        assert arm.groups(acct.subscription) == [], acct.subscription
    assert wbhome.json("status")["billable"] == 0
    from workbench.core.providers.credentials import CredentialStore

    for i in range(len(accounts)):
        CredentialStore().delete("azure", f"{prefix}{i}")
