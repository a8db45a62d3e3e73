"""Session.mutate: a change runs in its lane off the UI thread, the session refreshes after it, and an error
nobody handles is shown (ui/runtime/session.py, ui/runtime/lanes.py)."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from workbench.core.domain.errors import QuotaError
from workbench.ui.runtime.lanes import TEARDOWN, Lane, profile_lane
from workbench.ui.runtime.session import Snapshot


@pytest.fixture
def snapshots(session):
    """The session's snapshots, counted (no provider is asked)."""
    taken: list[float] = []

    def snap(_accounts) -> Snapshot:
        taken.append(time.time())
        return Snapshot(taken_at=taken[-1])

    session._snapshot_fn = snap
    return taken


def _error_boxes() -> list[QMessageBox]:
    return [w for w in QApplication.topLevelWidgets()
            if isinstance(w, QMessageBox) and w.objectName() == "error-dialog" and w.isVisible()]


def _close_error_boxes() -> None:
    for box in _error_boxes():
        box.close()


def test_a_change_runs_off_the_ui_thread_then_the_session_refreshes(qtbot, session, snapshots):
    ui = threading.get_ident()
    seen: list[tuple[object, bool, int]] = []

    def change() -> int:
        return threading.get_ident()

    session.mutate(change, lane=TEARDOWN).then(
        lambda worker: seen.append((worker != ui, session.refreshing, len(snapshots))))
    qtbot.waitUntil(lambda: len(snapshots) == 1 and not session.refreshing, timeout=5_000)
    assert seen == [(True, False, 0)]  # on a worker; the caller's callback ran first, then the refresh
    assert session.snapshot.taken_at == snapshots[0]


def test_an_error_nobody_handles_is_shown_and_the_session_still_refreshes(qtbot, session, snapshots):
    parent = QWidget()
    qtbot.addWidget(parent)

    def change() -> None:
        raise QuotaError("3 of 3 GPUs in use", hint="ask for more")

    session.mutate(change, lane=profile_lane("aws-lab"), parent=parent)
    qtbot.waitUntil(lambda: bool(_error_boxes()) or bool(parent.findChildren(QMessageBox)), timeout=5_000)
    box = (parent.findChildren(QMessageBox) or _error_boxes())[0]
    assert box.objectName() == "error-dialog"
    assert "3 of 3 GPUs in use" in box.informativeText() and "ask for more" in box.informativeText()
    qtbot.waitUntil(lambda: len(snapshots) == 1, timeout=5_000)  # a failed change may have done part of its work
    box.close()


def test_an_error_the_caller_handles_is_not_shown_again(qtbot, session, snapshots):
    parent = QWidget()
    qtbot.addWidget(parent)
    handled: list[BaseException] = []

    def change() -> None:
        raise QuotaError("no quota")

    session.mutate(change, lane=TEARDOWN, parent=parent).fail(handled.append)
    qtbot.waitUntil(lambda: len(snapshots) == 1, timeout=5_000)
    assert [str(e) for e in handled] == ["no quota"]
    assert not parent.findChildren(QMessageBox) and not _error_boxes()


def test_a_deleted_parent_skips_the_callbacks_not_the_refresh_nor_the_error(qtbot, session, snapshots):
    parent = QWidget()
    go = threading.Event()
    handled: list[BaseException] = []

    def change() -> None:
        go.wait(5)
        raise QuotaError("ended while its window was gone")

    session.mutate(change, lane=TEARDOWN, parent=parent).fail(handled.append)
    parent.deleteLater()
    qtbot.wait(50)
    go.set()
    try:
        qtbot.waitUntil(lambda: len(snapshots) == 1 and bool(_error_boxes()), timeout=5_000)
        assert handled == []  # its handler belonged to the window that went
        assert "ended while its window was gone" in _error_boxes()[0].informativeText()
    finally:
        _close_error_boxes()


def test_a_refresh_already_running_is_followed_by_another(qtbot, session):
    release = threading.Event()
    taken: list[float] = []

    def slow(_accounts) -> Snapshot:
        if not taken:
            release.wait(5)  # the first refresh began before the change and ends after it
        taken.append(time.time())
        return Snapshot(taken_at=taken[-1])

    session._snapshot_fn = slow
    assert session.refresh() is not None
    done: list[object] = []
    session.mutate(lambda: "changed", lane=TEARDOWN).then(done.append)
    qtbot.waitUntil(lambda: done == ["changed"], timeout=5_000)
    assert session.refresh() is None  # a plain tick is still skipped while one runs
    release.set()
    qtbot.waitUntil(lambda: len(taken) == 2 and not session.refreshing, timeout=5_000)
    qtbot.wait(100)
    assert len(taken) == 2  # one more, not one per request


def test_a_lane_is_a_named_lane_never_a_string(session):
    with pytest.raises(TypeError, match="Lane"):
        session.run(lambda: None, lane=str(TEARDOWN))  # type: ignore[arg-type]
    assert profile_lane("gpu-lab").name == "profile:gpu-lab" and profile_lane("gpu-lab") == profile_lane("gpu-lab")
    assert isinstance(TEARDOWN, Lane) and str(TEARDOWN) == "teardown"
