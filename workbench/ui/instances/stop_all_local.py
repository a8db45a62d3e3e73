"""Stop all billing's box of jobs on this computer: listed apart, each unticked by default.

A Local job costs nothing (unless its profile sets an hourly price), so Stop all billing never
ends one unless the user ticks it: its training goes on.  Main thread only.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QGroupBox, QLabel, QVBoxLayout, QWidget

from workbench.core.lifecycle.teardown import Billable, hourly_price
from workbench.ui.i18n import tr
from workbench.ui.instances.stop_all_model import describe, price_text


class LocalJobsBox(QGroupBox):
    """One checkbox per job on this computer; ``chosen()`` are the ticked ones."""

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
        for item in items:
            price = hourly_price(item)
            cost = price_text(item) if price else tr("free")
            box = QCheckBox(tr("{thing}, {cost}").format(thing=describe(item), cost=cost))
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
