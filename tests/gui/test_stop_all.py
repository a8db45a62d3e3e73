"""The one-click "Stop all billing" flow: inventory, confirmation, parallel teardown with progress, result.

Real QApplication (offscreen), the real Local provider (real processes) and the file-backed fakecloud
test plugin (leaking disks, instances that refuse to die, a slow cloud).
"""

from __future__ import annotations

import os

import psutil
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QPushButton

from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import execute, choose_offer
from workbench.core.domain.models import Instance, Profile, Resource
from workbench.ui.runtime.session import Session
from workbench.ui.instances.stop_all import GREEN, RED, StopAllDialog

SLEEPER = parse_spec("name: x\nrun: sleep 60\nguards:\n  max_runtime: 5m\n")
GPU_JOB = parse_spec("name: t\nrun: x\nresources:\n  gpu: V100:1\n")


@pytest.fixture
def fake_session(qtbot, fake_accounts):
    s = Session(fake_accounts)
    yield s
    qtbot.waitUntil(lambda: not s.refreshing, timeout=10_000)  # the refresh after a teardown
    s.shutdown()


def _open(qtbot, session, **kw) -> StopAllDialog:
    dlg = StopAllDialog(session, timeout=kw.pop("timeout", 5), poll=kw.pop("poll", 0.1), **kw)
    qtbot.addWidget(dlg)
    dlg.start()
    qtbot.waitUntil(lambda: dlg.state in ("confirm", "nothing"), timeout=10_000)
    return dlg


def _rows(dlg: StopAllDialog) -> list[tuple[str, ...]]:
    m = dlg.model
    return [tuple(m.index(r, c).data() for c in range(m.columnCount())) for r in range(m.rowCount())]


def _stop(qtbot, dlg: StopAllDialog, button: QPushButton | None = None, timeout: int = 15_000) -> None:
    qtbot.mouseClick(button or dlg.stop_button, Qt.MouseButton.LeftButton)
    assert dlg.state == "running"
    qtbot.waitUntil(lambda: dlg.state == "done", timeout=timeout)


def _group_alive(pgid: int) -> list[int]:
    alive = []
    for p in psutil.process_iter(["pid", "status"]):
        try:
            if os.getpgid(p.pid) == pgid and p.info["status"] != psutil.STATUS_ZOMBIE:
                alive.append(p.pid)
        except (ProcessLookupError, psutil.Error):
            continue
    return alive


def _local_boxes(dlg: StopAllDialog) -> list[tuple[str, bool]]:
    return [(box.text(), box.isChecked()) for box, _ in dlg.local_box.boxes]


def test_stops_a_real_local_job_and_verifies_once_ticked(qtbot, session):
    acc = session.accounts
    inst = execute(acc, choose_offer(acc, SLEEPER, provider="local"))[0]
    pid, pgid = inst.extra["pid"], inst.extra["pgid"]
    assert psutil.pid_exists(pid) and _group_alive(pgid)
    notes: list[tuple[str, str, str]] = []
    session.notify.connect(lambda *a: notes.append(a))
    refreshed: list[object] = []
    session.snapshot_changed.connect(refreshed.append)

    dlg = _open(qtbot, session)

    assert dlg.state == "confirm"
    assert _rows(dlg) == []  # jobs on this computer are listed apart …
    assert _local_boxes(dlg) == [(f"x ({inst.instance_id}), free", False)]  # … and unticked
    assert dlg.local_box.isVisible() and not dlg.stop_button.isEnabled()
    assert dlg.local_box.title() == "Jobs on this computer"
    dlg.local_box.boxes[0][0].setChecked(True)
    assert dlg.stop_button.isEnabled()
    assert "$0.00/h in total" in dlg.heading.text() and "1 billable" in dlg.heading.text()
    assert dlg.table.isColumnHidden(4)
    assert dlg.stop_button.isVisible() and dlg.close_button.text() == "&Cancel"

    _stop(qtbot, dlg)

    assert dlg.result.text() == "0 billable resources remain"
    assert GREEN in dlg.result.styleSheet()
    assert dlg.model.status_of(inst) == "verified" and not dlg.table.isColumnHidden(4)
    assert not dlg.retry_button.isVisible() and dlg.close_button.text() == "&Close"
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert _group_alive(pgid) == []
    assert [i for i in acc.store.list_instances() if i.state.billable] == []
    assert notes[-1] == ("Billing stopped", "0 billable resources remain", "info")
    qtbot.waitUntil(lambda: bool(refreshed), timeout=10_000)  # session.refresh() afterwards
    assert refreshed[-1].billable == []


def test_a_local_job_with_a_price_is_stopped_with_the_money(qtbot, session):
    """A price per hour (electricity) makes a job on this computer bill: ticked like a cloud machine."""
    acc = session.accounts
    acc.save_profile(Profile("local", "local", "local", settings={"price_per_hour": "0.25"}))
    inst = execute(acc, choose_offer(acc, SLEEPER, provider="local"))[0]
    dlg = _open(qtbot, session)
    assert [r[0] for r in _rows(dlg)] == [f"x ({inst.instance_id})"] and dlg.local_box.boxes == []
    assert dlg.stop_button.isEnabled() and dlg.heading.text() == "Stop 1 billable thing(s), $0.25/h in total?"
    _stop(qtbot, dlg)
    assert dlg.model.status_of(inst) == "verified"
    assert _group_alive(inst.extra["pgid"]) == []


def test_nothing_billing_offers_only_close(qtbot, session):
    dlg = _open(qtbot, session)
    assert dlg.state == "nothing"
    assert dlg.nothing.text() == "Nothing is billing right now" and dlg.nothing.isVisible()
    assert not dlg.stop_button.isVisible() and not dlg.retry_button.isVisible()
    assert dlg.close_button.text() == "&Close"
    qtbot.mouseClick(dlg.close_button, Qt.MouseButton.LeftButton)
    assert not dlg.isVisible()


def test_a_profile_that_cannot_be_listed_is_named_without_crying_wolf(qtbot, fake_session, fake_accounts):
    """Nothing was ever launched there: "cannot check", and the result is still 0 billable."""
    fake_accounts.save_profile(Profile("nocreds", "fakecloud", "fake-east"))  # no credentials stored
    notes: list[tuple[str, str, str]] = []
    fake_session.notify.connect(lambda *a: notes.append(a))
    dlg = _open(qtbot, fake_session)
    assert dlg.state == "confirm"  # never "nothing": it could not be checked
    text = dlg.listing_errors.text()
    assert dlg.listing_errors.isVisible() and text.startswith("cannot check nocreds: no credentials stored")
    assert "may still be billing" not in text and RED not in dlg.listing_errors.styleSheet()
    assert "not every profile could be listed" in dlg.heading.text()
    _stop(qtbot, dlg)  # teardown tries again; it cannot check that profile either
    assert dlg.result.text() == "0 billable resources remain" and GREEN in dlg.result.styleSheet()
    items = [w.text() for w in dlg.remaining_box.findChildren(type(dlg.result), "stop-all-remaining-item")]
    assert len(items) == 1 and items[0].startswith("• cannot check nocreds: no credentials stored")
    assert "may still be billing" not in items[0]
    assert notes[-1][0] == "Billing stopped" and notes[-1][2] == "info" and "cannot check nocreds" in notes[-1][1]


def test_a_profile_with_our_launch_that_cannot_be_listed_may_still_bill(qtbot, fake_session, fake_accounts):
    fake_accounts.add_fake("lost")
    inst = execute(fake_accounts, choose_offer(fake_accounts, GPU_JOB, profile="lost"))[0]
    fake_accounts.credentials.delete("fakecloud", "lost")  # now it cannot be listed; the store knows the launch
    fake_accounts.forget("lost")
    notes: list[tuple[str, str, str]] = []
    fake_session.notify.connect(lambda *a: notes.append(a))
    dlg = _open(qtbot, fake_session)
    text = dlg.listing_errors.text()
    assert text.startswith("cannot check lost: ") and "may still be billing" in text
    assert RED in dlg.listing_errors.styleSheet()
    _stop(qtbot, dlg)
    assert dlg.result.text() == "Could not verify everything; something may still be billing:"
    assert RED in dlg.result.styleSheet() and dlg.retry_button.isVisible()
    items = [w.text() for w in dlg.remaining_box.findChildren(type(dlg.result), "stop-all-remaining-item")]
    assert len(items) == 1 and "cannot check lost" in items[0] and "may still be billing" in items[0]
    assert notes[-1][0] == "May still be billing" and notes[-1][2] == "warning"
    assert inst.launch_id  # (kept for the reader: the launch the store remembers)


def test_free_local_jobs_are_listed_apart_and_survive_stop_all(qtbot, fake_session, fake_accounts):
    acc = fake_accounts
    job = execute(acc, choose_offer(acc, SLEEPER, provider="local"))[0]
    acc.add_fake("cloud")
    machine = execute(acc, choose_offer(acc, GPU_JOB, profile="cloud"))[0]
    dlg = _open(qtbot, fake_session)
    assert [r[0] for r in _rows(dlg)] == [f"t ({machine.instance_id})"]  # the money
    assert _local_boxes(dlg) == [(f"x ({job.instance_id}), free", False)]
    assert "Stop 1 billable thing(s), $3.06/h in total?" == dlg.heading.text()
    _stop(qtbot, dlg)
    assert dlg.result.text() == "0 billable resources remain"
    alive = {i.instance_id: i.state.billable for i in acc.store.list_instances()}
    assert alive[machine.instance_id] is False and alive[job.instance_id] is True  # training goes on
    assert psutil.pid_exists(job.extra["pid"])


def test_only_free_local_jobs_means_nothing_is_billing(qtbot, session):
    execute(session.accounts, choose_offer(session.accounts, SLEEPER, provider="local"))
    dlg = _open(qtbot, session)
    assert dlg.state == "confirm" and dlg.heading.text() == "Nothing is billing right now"
    assert not dlg.stop_button.isEnabled() and len(dlg.local_box.boxes) == 1


def test_the_window_closing_mid_teardown_breaks_nothing(qtbot, session):
    acc = session.accounts
    inst = execute(acc, choose_offer(acc, SLEEPER, provider="local"))[0]
    notes: list[tuple[str, str, str]] = []
    session.notify.connect(lambda *a: notes.append(a))
    dlg = _open(qtbot, session)
    dlg.local_box.boxes[0][0].setChecked(True)
    qtbot.mouseClick(dlg.stop_button, Qt.MouseButton.LeftButton)
    session.shutdown()  # what the main window does when it closes; the running teardown goes on
    qtbot.waitUntil(lambda: dlg.state == "done", timeout=15_000)
    assert dlg.result.text() == "0 billable resources remain"
    assert dlg.model.status_of(inst) == "verified"
    assert notes[-1][2] == "info"


def test_leftover_disks_are_listed_and_deleted(qtbot, fake_session, fake_accounts):
    fake_accounts.add_fake("leaky", leak_disk="true")
    first = execute(fake_accounts, choose_offer(fake_accounts, GPU_JOB, profile="leaky"))[0]
    second = execute(fake_accounts, choose_offer(fake_accounts, GPU_JOB, profile="leaky"))[0]
    prov = fake_accounts.provider(fake_accounts.profile("leaky"))
    prov.terminate([first])  # ends the machine, leaves its disk billing

    dlg = _open(qtbot, fake_session)

    rows = _rows(dlg)
    assert (f"t ({second.instance_id})", "fakecloud/leaky", "fake-east", "$3.06/h", "billing") in rows
    assert (f"leftover disk disk-{first.instance_id}", "fakecloud/leaky", "fake-east", "unknown",
            "billing") in rows
    assert len(rows) == 2
    assert "$3.06/h in total" in dlg.heading.text()
    assert "1 leftover(s) without a known price" in dlg.note.text()

    _stop(qtbot, dlg)

    assert dlg.result.text() == "0 billable resources remain"
    # the second machine's disk showed up during the teardown and was deleted too
    disks = [x for x in dlg.model.items() if isinstance(x, Resource)]
    assert sorted(d.resource_id for d in disks) == sorted(f"disk-{i.instance_id}" for i in (first, second))
    assert {dlg.model.status_of(x) for x in dlg.model.items()} == {"verified"}
    assert prov.leftovers() == [] and [i for i in prov.instances() if i.state.billable] == []


def test_what_remains_is_listed_with_console_links_and_retry_works(qtbot, fake_session, fake_accounts,
                                                                    monkeypatch):
    fake_accounts.add_fake("stuck", stuck="true")
    inst = execute(fake_accounts, choose_offer(fake_accounts, GPU_JOB, profile="stuck"))[0]
    cls = type(fake_accounts.provider(fake_accounts.profile("stuck")))
    monkeypatch.setattr(cls, "console_url", lambda self, item: f"https://console.fake/{item.instance_id}"
                        if isinstance(item, Instance) else None, raising=False)
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toString()) or True)
    notes: list[tuple[str, str, str]] = []
    fake_session.notify.connect(lambda *a: notes.append(a))

    dlg = _open(qtbot, fake_session, timeout=0.5)
    _stop(qtbot, dlg)

    assert dlg.result.text() == "1 billable resource(s) remain:" and RED in dlg.result.styleSheet()
    items = [w.text() for w in dlg.remaining_box.findChildren(type(dlg.result), "stop-all-remaining-item")]
    assert items == [f"• t ({inst.instance_id}) on fakecloud/stuck (fake-east), $3.06/h"]
    assert dlg.model.status_of(inst) == "remaining"
    assert notes[-1][0] == "Still billing" and notes[-1][2] == "error" and inst.instance_id in notes[-1][1]
    links = dlg.remaining_box.findChildren(QPushButton, "stop-all-console-link")
    assert len(links) == 1
    qtbot.mouseClick(links[0], Qt.MouseButton.LeftButton)
    assert opened == [f"https://console.fake/{inst.instance_id}"]
    assert dlg.retry_button.isVisible()

    # the cloud lets go: Retry runs the teardown again and verifies
    fake_accounts.save_profile(Profile("stuck", "fakecloud", "fake-east", settings={}))
    _stop(qtbot, dlg, dlg.retry_button)

    assert dlg.result.text() == "0 billable resources remain"
    assert dlg.model.status_of(inst) == "verified"
    assert not dlg.retry_button.isVisible()
    assert dlg.remaining_box.findChildren(QPushButton, "stop-all-console-link") == []
    assert [n[2] for n in notes] == ["error", "info"]


def test_a_slow_cloud_never_freezes_the_window_and_closing_keeps_it_running(qtbot, fake_session,
                                                                           fake_accounts, gaps):
    fake_accounts.add_fake("slow")
    inst = execute(fake_accounts, choose_offer(fake_accounts, GPU_JOB, profile="slow"))[0]
    # every provider call now sleeps 1 s (2 s would make this test ~15 s: a teardown is ~5 calls deep)
    fake_accounts.add_fake("slow", delay="1")

    gaps.start()
    dlg = StopAllDialog.open_for(fake_session, timeout=5, poll=0.1)
    qtbot.addWidget(dlg)
    assert dlg.state == "loading" and dlg.busy.isVisible()
    qtbot.waitUntil(lambda: dlg.state == "confirm", timeout=10_000)
    qtbot.mouseClick(dlg.stop_button, Qt.MouseButton.LeftButton)
    assert dlg.running
    dlg.reject()  # Escape / close while running: hides, keeps going
    assert not dlg.isVisible() and dlg.running
    assert StopAllDialog.open_for(fake_session) is dlg and dlg.isVisible()
    qtbot.waitUntil(lambda: dlg.state == "done", timeout=15_000)
    largest = gaps.stop()

    assert largest < gaps.limit(1.0), f"event loop stalled for {largest:.3f} s"
    assert dlg.result.text() == "0 billable resources remain"
    assert dlg.model.status_of(inst) == "verified"
    # a finished dialog is replaced by a fresh one next time
    dlg.reject()
    again = StopAllDialog.open_for(fake_session, timeout=5, poll=0.1)
    qtbot.addWidget(again)
    assert again is not dlg and again.state == "loading"
    qtbot.waitUntil(lambda: again.state == "nothing", timeout=10_000)
