"""The wizard's one draft and its explicit Launch action (launch_draft.py, launch_review.py).

The pages write only their own fields of the draft when the user moves on; the launch starts
only from the review page's Launch action (the wizard's Launch button triggers it), never from
``validatePage`` or ``accept()``.
"""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import QObject, Qt, SIGNAL
from PySide6.QtWidgets import QWizard

from workbench.core.domain.models import Guards, JobSpec
from workbench.core.paths import resources_dir
from workbench.ui.launch.launch_draft import Draft, LaunchDraft
from workbench.ui.launch.launch_wizard import LaunchWizard

EXAMPLE = str(resources_dir() / "examples" / "local-smoke.yaml")
FINISH = QWizard.WizardButton.FinishButton


def test_update_replaces_the_value_and_names_what_changed(qtbot):
    draft = Draft()
    first = draft.value
    seen: list[tuple[LaunchDraft, frozenset[str]]] = []
    draft.changed.connect(lambda value, names: seen.append((value, names)))
    spec = JobSpec(name="a", run="echo")
    draft.update(spec=spec, alternatives=0)  # alternatives is already 0: not announced
    assert seen == [(draft.value, frozenset({"spec"}))] and draft.value.spec is spec
    assert first.spec.name == "job"  # the old value is untouched: values are frozen
    draft.update(spec=spec)
    assert len(seen) == 1  # nothing changed, nothing emitted
    with pytest.raises(TypeError):
        draft.update(no_such_field=1)


def test_launch_spec_folds_in_the_guards_page():
    spec = JobSpec(name="a", run="echo")
    assert LaunchDraft(spec=spec).launch_spec() is spec  # guards not set yet: the spec's own
    mine = Guards(max_runtime_minutes=5, idle_minutes=None, budget_usd=2.0)
    d = LaunchDraft(spec=spec, guards=mine)
    assert d.launch_spec() == dataclasses.replace(spec, guards=mine) and d.spec is spec
    assert not d.ready


def _to_review(qtbot, session) -> LaunchWizard:
    wiz = LaunchWizard(session, spec_path=EXAMPLE)
    qtbot.addWidget(wiz)
    wiz.show()
    wiz.next()
    qtbot.waitUntil(lambda: not wiz.offer_page.loading, timeout=10_000)
    wiz.next()
    wiz.guards_page.budget_on.setChecked(True)
    wiz.next()
    assert wiz.currentPage() is wiz.review_page
    return wiz


def test_pages_fill_the_draft_as_the_user_moves_on(qtbot, session):
    wiz = _to_review(qtbot, session)
    d = wiz.draft.value
    assert d.spec.name == "local-smoke" and d.choice is not None and d.choice.profile == "local"
    assert d.offers and d.choice in d.offers and d.alternatives == sum(o.offer.available for o in d.offers) - 1
    assert d.guards is not None and d.guards.budget_usd == 10.0 and d.spec.guards.budget_usd is None
    assert wiz.spec.guards.budget_usd == 10.0  # the wizard's spec is the draft's launch_spec()
    assert "budget $10.00" in wiz.review_page.fields["guards"].text()


def test_only_the_launch_action_starts_a_launch(qtbot, session):
    wiz = _to_review(qtbot, session)
    page = wiz.review_page
    assert page.launch_action.isEnabled()
    # Finishing or validating the page is not a launch: nothing starts, the wizard stays open.
    assert page.validatePage() is False
    wiz.accept()
    assert wiz.run is None and wiz.isVisible()
    # The Finish button is wired to the action only (QWizard's own accept is disconnected).
    finish = wiz.button(FINISH)
    assert finish.text().replace("&", "") == "Launch"
    assert QObject.receivers(finish, SIGNAL("clicked(bool)")) == 1
    with qtbot.waitSignal(wiz.launched, timeout=15_000):
        qtbot.mouseClick(finish, Qt.MouseButton.LeftButton)
    assert wiz.launched_ok and not wiz.isVisible() and wiz.result() == QWizard.DialogCode.Accepted
    assert not page.launch_action.isEnabled()  # a launched draft is not launched twice
    first = wiz.launch_id
    page.launch_action.trigger()
    assert wiz.launch_id == first
