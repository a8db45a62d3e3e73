"""Stop all billing's box of jobs on the user's own hardware: listed apart, each unticked by default.

A job on this computer (Local) or on the user's cluster (a provider whose ``own_hardware`` is set) that
costs nothing is precious: a training run goes on, a queued cluster job may have waited days for its turn.
Stop all billing never ends one unless the user ticks it (:func:`billing_status.kept_apart` picks them; one
whose profile sets a price is listed with the cloud machines, ticked).  Main thread only.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QGroupBox, QLabel, QVBoxLayout, QWidget

from workbench.core.domain.models import Instance
from workbench.core.lifecycle.teardown import Billable
from workbench.core.money.billing_status import on_this_computer
from workbench.ui.common.format import state_label
from workbench.ui.common.job_state import queue_text
from workbench.ui.i18n import tr
from workbench.ui.instances.stop_all_model import describe


def own_job_text(item: Billable) -> str:
    """A line of the box: "x (id), free" here; "x (id) on login.hpc.example — queued: … · no charge" there."""
    if not isinstance(item, Instance) or on_this_computer(item):
        return tr("{thing}, {cost}").format(thing=describe(item), cost=tr("free"))
    state = queue_text(item) or state_label(item.state)
    return tr("{thing} on {cluster} — {state} · no charge").format(
        thing=describe(item), cluster=item.host or item.region, state=state)


def box_title(items: list[Billable]) -> str:
    here = sum(on_this_computer(x.provider) for x in items)
    if here == len(items):
        return tr("Jobs on this computer")
    if here == 0:
        return tr("Jobs on your cluster")
    return tr("Jobs on this computer and your cluster")


class LocalJobsBox(QGroupBox):
    """One checkbox per free job on the user's own hardware; ``chosen()`` are the ticked ones."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(tr("Jobs on this computer"), parent)
        self.setObjectName("stop-all-local")
        self._lay = QVBoxLayout(self)
        self.note = QLabel(tr("They cost nothing and are not stopped unless you tick them."))
        self.note.setObjectName("stop-all-local-note")
        self.note.setWordWrap(True)
        self._lay.addWidget(self.note)
        self.boxes: list[tuple[QCheckBox, Billable]] = []

    def set_items(self, items: list[Billable]) -> None:
        for box, _ in self.boxes:
            box.hide()
            box.setParent(None)
            box.deleteLater()
        self.boxes = []
        self.setTitle(box_title(items))
        queued = any(not on_this_computer(x.provider) for x in items)
        self.note.setText(tr("They cost nothing and are not stopped unless you tick them. A cluster job that is "
                             "cancelled loses its place in the queue.") if queued
                          else tr("They cost nothing and are not stopped unless you tick them."))
        for item in items:
            box = QCheckBox(own_job_text(item))
            box.setObjectName("stop-all-local-job")
            box.setChecked(False)
            box.toggled.connect(lambda _on: self.changed.emit())
            self._lay.addWidget(box)
            self.boxes.append((box, item))
        self.setVisible(bool(items))

    def chosen(self) -> list[Billable]:
        return [item for box, item in self.boxes if box.isChecked()]

    def kept(self) -> list[str]:
        """Launch ids of the unticked jobs (the teardown leaves them alone; a launch is kept or ended whole)."""
        ticked = {item.launch_id for item in self.chosen()}
        return sorted({item.launch_id for box, item in self.boxes if item.launch_id} - ticked)

    def lock(self, locked: bool) -> None:
        for box, _ in self.boxes:
            box.setEnabled(not locked)
