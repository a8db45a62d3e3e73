"""The account's controller in the app (issue 33): the review page's "Keep watching while this computer is off",
handing a launch over after it started, Instances' "watched by the controller", the Accounts page's Controller
section, and "while you were away" from the board's events (and a controller that does not answer).

The fake cloud has no bucket and no controller machine type, so ``deploy.plan`` / ``up`` / ``start`` /
``wait_for_heartbeat`` are replaced where a test needs them; the board is a real one in a folder
(``Board(FolderObjects(path))``) handed to the session's controller hook, so the hand-over, the events, the
attempts and the heartbeat are the core's own code on real files.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from workbench.core.controller import deploy, handover
from workbench.core.controller.board import Board, FolderObjects
from workbench.core.controller.service import HEARTBEAT
from workbench.core.domain.errors import ConfigError
from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import choose_offer, execute
from workbench.core.money.controller_cost import controller_cost
from workbench.core.providers.contract import ControllerIdentity
from workbench.ui.instances.instances_view import InstancesView
from workbench.ui.launch.launch_wizard import LaunchWizard
from workbench.ui.runtime.session import Session
from workbench.ui.shell.away_notice import AwayNotice

FINISH = QWizard.WizardButton.FinishButton
BUCKET = "s3://lab-bucket/wb"


@pytest.fixture
def board(tmp_path) -> Board:
    return Board(FolderObjects(tmp_path / "board"))


@pytest.fixture
def fake_session(qtbot, fake_accounts, board):
    s = Session(fake_accounts)
    s.controller.boards["lab"] = board
    yield s
    s.shutdown()


@pytest.fixture
def planned(monkeypatch):
    """``deploy.plan`` for a profile with a bucket: AWS's controller machine and price, an identity to create."""
    calls = []

    def plan(accounts, profile, create_identity=False):
        calls.append(profile.name)
        if not profile.settings.get("storage_uri"):
            raise ConfigError(f"profile {profile.name!r} has no bucket for the controller's records")
        return deploy.Planned(profile, None, controller_cost("aws"),
                              ControllerIdentity("workbench-controller-role", ready=False,
                                                 missing=("iam:CreateRole",)), f"{BUCKET}/workbench-controller/x")

    monkeypatch.setattr(deploy, "plan", plan)
    return calls


def _spec(tmp_path: Path, name: str, extra: str = "") -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"name: {name}\nrun: python train.py\nresources:\n  gpu: V100:1\nproviders: [fakecloud]\n{extra}",
                    encoding="utf-8")
    return str(path)


def _review(qtbot, session, spec_path: str) -> LaunchWizard:
    wiz = LaunchWizard(session, spec_path=spec_path)
    qtbot.addWidget(wiz)
    wiz.show()
    wiz.next()
    qtbot.waitUntil(lambda: not wiz.offer_page.loading and wiz.offer_page.selected() is not None, timeout=10_000)
    wiz.next()
    wiz.next()
    assert wiz.currentPage() is wiz.review_page
    watch = wiz.review_page.watch
    qtbot.waitUntil(lambda: watch.plan is not None or "checking" not in watch.check.toolTip(), timeout=10_000)
    return wiz


def _controller_launch(acc) -> str:
    """A controller machine of profile ``lab`` in the store (its launch is what ``deploy.up`` records)."""
    (inst,) = execute(acc, choose_offer(acc, deploy.spec_for(Path("."), 8), provider="fakecloud"))
    return inst.launch_id


# ------------------------------------------------------------------------------ the review page's option

@pytest.mark.parametrize("extra, on", [
    ("recovery: {max_restarts: 2, on: [preemption]}\n", True),
    ("guards:\n  max_runtime: 6h\n", True),
    ("guards:\n  max_runtime: 2h\n", False),
])
def test_keep_watching_is_offered_with_its_price_and_checked_for_long_or_recovering_launches(
        qtbot, tmp_path, fake_accounts, fake_session, planned, extra, on):
    fake_accounts.add_fake("lab", storage_uri=BUCKET)
    wiz = _review(qtbot, fake_session, _spec(tmp_path, "train", extra))
    watch = wiz.review_page.watch
    assert watch.isVisible() and watch.check.isEnabled()
    assert watch.check.text() == "Keep watching while this computer is off"
    assert watch.check.isChecked() is on and wiz.draft.value.keep_watching is on
    assert watch.price.text() == "+ $0.011/h while it watches"
    assert "t3a.nano" in watch.price.toolTip() and "machine" in watch.price.toolTip()
    watch.check.click()  # the user's choice sticks
    assert wiz.draft.value.keep_watching is (not on)
    wiz.review_page.show_draft(wiz.draft.value)
    assert watch.check.isChecked() is (not on)


def test_keep_watching_is_disabled_with_its_reason(qtbot, tmp_path, fake_accounts, fake_session, planned):
    fake_accounts.add_fake("lab")  # no storage_uri: nowhere for the app and the controller to meet
    wiz = _review(qtbot, fake_session, _spec(tmp_path, "long", "guards:\n  max_runtime: 12h\n"))
    watch = wiz.review_page.watch
    assert not watch.check.isEnabled() and not watch.check.isChecked() and not wiz.draft.value.keep_watching
    assert "storage_uri" in watch.check.toolTip()
    wiz.reject()

    fake_accounts.save_profile(fake_accounts.profile("lab").__class__(
        "lab", "fakecloud", "fake-east", settings={"storage_uri": BUCKET}))
    fake_session.controller._plans.clear()
    wiz = _review(qtbot, fake_session, _spec(tmp_path, "secretive", "secrets: [HF_TOKEN]\n"))
    watch = wiz.review_page.watch
    assert not watch.check.isEnabled() and "launch secrets cannot be handed over" in watch.check.toolTip()


# ------------------------------------------------------------------------------ handing over after the launch

def test_a_launch_with_keep_watching_is_handed_over_once_it_runs(qtbot, tmp_path, fake_accounts, fake_session,
                                                                   planned, board):
    fake_accounts.add_fake("lab", storage_uri=BUCKET)
    _controller_launch(fake_accounts)  # the profile has its controller: no question, no creation
    wiz = _review(qtbot, fake_session, _spec(tmp_path, "spot-train", "guards:\n  max_runtime: 8h\n"))
    assert wiz.draft.value.keep_watching
    with qtbot.waitSignal(fake_session.controller.handed_over, timeout=15_000) as got:
        qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
    launch_id, record = got.args
    assert isinstance(record, dict) and record["root_id"] == launch_id and record["profile"] == "lab"
    assert handover.handed(fake_accounts.store) == {launch_id: "lab"}
    on_board = board.get(f"launches/{launch_id}.json")[0]
    assert on_board["app_public_key"].startswith("ssh-ed25519 ")
    assert on_board["launch"]["spec"]["guards"]["max_runtime_minutes"] == 480


def test_the_first_controller_of_an_account_is_asked_for_once_then_created_before_the_hand_over(
        qtbot, tmp_path, fake_accounts, fake_session, planned, board, monkeypatch):
    fake_accounts.add_fake("lab", storage_uri=BUCKET)
    made = []

    def up(accounts, profile, progress=None, **_kw):
        progress("provider")
        launch_id = _controller_launch(accounts)
        made.append(("up", launch_id))
        return deploy.UpResult(launch_id, None, accounts.store.list_instances(launch_id=launch_id))

    monkeypatch.setattr(deploy, "up", up)
    monkeypatch.setattr(deploy, "start", lambda accounts, res, **_kw: made.append(("start", res.launch_id)))
    monkeypatch.setattr(deploy, "wait_for_heartbeat", lambda *a, **kw: {"ts": time.time(), "launch_id": "x"})
    wiz = _review(qtbot, fake_session, _spec(tmp_path, "resumable", "recovery: {max_restarts: 2}\n"))
    assert wiz.review_page.watch.plan.needs_confirmation
    qtbot.mouseClick(wiz.button(FINISH), Qt.MouseButton.LeftButton)
    box = wiz.error_box
    assert box is not None and box.objectName() == "controller-confirm" and wiz.run is None  # nothing launched yet
    details = box.informativeText()
    for words in ("t3a.nano", "$0.011/h all-in", "workbench-controller-role", BUCKET, "once for this account"):
        assert words in details
    with qtbot.waitSignal(fake_session.controller.created, timeout=20_000):
        box.findChild(type(box.buttons()[0]), "controller-confirm-yes").click()
    assert [m[0] for m in made] == ["up", "start"]
    assert fake_accounts.store.get_setting(deploy.CONFIRMED + "lab") is not None
    qtbot.waitUntil(lambda: bool(handover.handed(fake_accounts.store)), timeout=10_000)
    (root,) = handover.handed(fake_accounts.store)
    assert root == wiz.launch_id and board.get(f"launches/{root}.json") is not None


# ------------------------------------------------------------------------------ Instances

def test_instances_mark_watched_launches_and_the_controller_and_hand_and_release(qtbot, fake_accounts,
                                                                                 fake_session, board, planned):
    fake_accounts.add_fake("lab", storage_uri=BUCKET)
    ctl = _controller_launch(fake_accounts)
    (job,) = execute(fake_accounts, choose_offer(fake_accounts, parse_spec(
        "name: llama-spot\nrun: python train.py\nresources:\n  gpu: V100:1\n"), provider="fakecloud"))
    (other,) = execute(fake_accounts, choose_offer(fake_accounts, parse_spec(
        "name: eval\nrun: python eval.py\nresources:\n  gpu: V100:1\n"), provider="fakecloud"))
    handover.hand_over(fake_accounts.store, board, job.launch_id)
    view = InstancesView(fake_session)
    qtbot.addWidget(view)
    with qtbot.waitSignal(fake_session.snapshot_changed, timeout=10_000):
        fake_session.refresh()
    model = view.model
    rows = {model.instance(r).launch_id: r for r in range(model.rowCount())}
    state = model.index(rows[job.launch_id], 5)
    assert state.data().endswith("· watched by the controller")
    assert "Watched by the controller of lab" in state.data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(rows[ctl], 0).data() == "controller of lab"
    assert model.index(rows[ctl], 5).data().startswith("controller · machine ")
    assert "watched" not in model.index(rows[other.launch_id], 5).data()

    def select(launch_id: str) -> None:
        view.table.clearSelection()
        for r in range(view.proxy.rowCount()):
            if view.proxy.index(r, 0).data(Qt.ItemDataRole.UserRole + 1).launch_id == launch_id:
                view.table.selectRow(r)

    select(job.launch_id)
    assert view.watch.release_action.isEnabled() and not view.watch.hand_action.isEnabled()
    select(ctl)
    assert not view.watch.release_action.isEnabled() and not view.watch.hand_action.isEnabled()
    select(job.launch_id)
    with qtbot.waitSignal(fake_session.controller.released, timeout=10_000):
        view.watch.release_action.trigger()
    assert handover.handed(fake_accounts.store) == {} and board.get(f"released/{job.launch_id}.json") is not None
    qtbot.waitUntil(lambda: job.launch_id not in fake_session.snapshot.watched, timeout=10_000)
    select(other.launch_id)
    assert view.watch.hand_action.isEnabled()
    with qtbot.waitSignal(fake_session.controller.handed_over, timeout=10_000):
        view.watch.hand_action.trigger()  # the account has its controller: handed at once
    assert handover.handed(fake_accounts.store) == {other.launch_id: "lab"}


# ------------------------------------------------------------------------------ while you were away

def _handed_launch(acc, board) -> str:
    (job,) = execute(acc, choose_offer(acc, parse_spec(
        "name: llama-spot\nrun: python train.py\nresources:\n  gpu: V100:1\n  spot: true\n"
        "recovery: {max_restarts: 3}\n"), provider="fakecloud"))
    handover.hand_over(acc.store, board, job.launch_id)
    return job.launch_id


def test_while_you_were_away_summarises_the_board_events_with_the_attempts_cost(qtbot, fake_accounts,
                                                                                 fake_session, board):
    fake_accounts.add_fake("lab", storage_uri=BUCKET)
    root = _handed_launch(fake_accounts, board)
    now = time.time()
    board.put(HEARTBEAT, {"launch_id": "ctl", "ts": now, "poll_s": 30, "watching": [root]})
    board.add_event({"source": "controller", "kind": "RecoveryEvent", "action": "relaunched", "attempt": 2,
                     "root_id": root, "launch_id": f"{root}-a2", "level": "warning", "ts": now - 600,
                     "message": "attempt 1 ended (spot interruption); attempt 2 runs"})
    board.add_event({"source": "controller", "kind": "GuardEvent", "guard": "finished", "action": "pending",
                     "launch_id": f"{root}-a2", "level": "info", "ts": now - 60, "message": "exit 0"})
    board.put(f"attempts/{root}.json", {"root_id": root, "ts": now, "attempts": [
        {"root_id": root, "launch_id": root, "attempt": 1, "cost": 1.25, "currency": "USD",
         "end_reason": "preemption", "instance_type": "fk.v100x1", "region": "fake-east", "spot": True},
        {"root_id": root, "launch_id": f"{root}-a2", "attempt": 2, "cost": 2.5, "currency": "USD",
         "end_reason": "finished", "instance_type": "fk.v100x1", "region": "fake-west", "spot": True}]})
    notice = AwayNotice(fake_session)
    notes = []
    fake_session.notify.connect(lambda *a: notes.append(a))
    with qtbot.waitSignal(fake_session.controller.caught_up, timeout=10_000):
        fake_session.refresh()  # the app opens: its first snapshot reads the board (on lane AWAY)
    assert notes and notes[-1][0] == "While you were away"
    assert notes[-1][1] == "1 relaunched, 1 finished; 2 attempts cost $3.75" and notes[-1][2] == "info"
    assert not notice.banner.isHidden() and "While you were away: 1 relaunched" in notice.text.text()
    dlg = notice.open_dialog()
    qtbot.addWidget(dlg)
    assert dlg.events.rowCount() == 2 and dlg.attempts.rowCount() == 2
    assert dlg.events.item(0, 3).text() == f"relaunched: attempt 2 runs as {root}-a2"
    assert "spot interruption" in dlg.events.item(0, 3).toolTip()
    assert (dlg.attempts.item(0, 3).text(), dlg.attempts.item(1, 4).text()) == ("interrupted", "$2.50")
    # read again within the minute: nothing new, nothing said twice
    notes.clear()
    with qtbot.waitSignal(fake_session.controller.caught_up, timeout=10_000):
        fake_session.controller.catch_up()
    assert notes == []


def test_a_controller_that_does_not_answer_is_said_once_and_the_app_takes_over(qtbot, fake_accounts,
                                                                              fake_session, board):
    fake_accounts.add_fake("lab", storage_uri=BUCKET)
    _handed_launch(fake_accounts, board)
    board.put(HEARTBEAT, {"launch_id": "ctl", "ts": time.time() - 3600, "poll_s": 30, "watching": []})
    notice = AwayNotice(fake_session)
    notes = []
    fake_session.notify.connect(lambda *a: notes.append(a))
    with qtbot.waitSignal(fake_session.controller.caught_up, timeout=10_000) as got:
        fake_session.controller.catch_up()
    assert [a.took_over for a in got.args[0]] == [True]
    warning = "The controller of lab does not answer; the app relaunches its launches while it runs."
    assert ("Controller does not answer", warning, "warning") in notes
    assert notice.text.text() == warning and not notice.banner.isHidden() and notice.details.isHidden()
    notes.clear()
    with qtbot.waitSignal(fake_session.controller.caught_up, timeout=10_000):
        fake_session.controller.catch_up()
    assert notes == []  # said once, until it answers again


# ------------------------------------------------------------------------------ Accounts

def test_accounts_shows_the_profiles_controller_and_its_price(qtbot, fake_accounts, fake_session, board,
                                                             monkeypatch):
    from workbench.ui.accounts.accounts_view import AccountsView

    fake_accounts.add_fake("lab", storage_uri=BUCKET)
    ctl = _controller_launch(fake_accounts)
    monkeypatch.setattr(deploy, "heartbeat", lambda accounts, profile: {"launch_id": ctl, "ts": time.time() - 12,
                                                                        "poll_s": 30})
    monkeypatch.setattr("workbench.core.money.controller_cost.controller_cost",
                        lambda provider, region=None: controller_cost("aws"))
    view = AccountsView(fake_session)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitUntil(lambda: view.loaded, timeout=10_000)
    top = next(view.tree.topLevelItem(i) for i in range(view.tree.topLevelItemCount())
               if view.tree.topLevelItem(i).data(0, Qt.ItemDataRole.UserRole) == ("provider", "fakecloud"))
    view.tree.setCurrentItem(top.child(0))
    panel = view.controller
    qtbot.waitUntil(lambda: panel.status is not None, timeout=10_000)
    assert panel.isVisible() and panel.state.text().startswith("answering, last heard 1")
    assert panel.price.text() == "$0.011/h all-in" and "t3a.nano" in panel.price.toolTip()
    assert panel.end_button.isEnabled() and not panel.create_button.isEnabled()
