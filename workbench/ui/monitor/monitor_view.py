"""The Monitor view: live GPU (or CPU) telemetry and spend of one instance.

Data flow
    A poll timer (about 1 s, setting ``monitor/poll_ms``) runs :func:`poll_instance`
    on the TaskRunner's read pool for the selected instance; a tick is skipped
    while the previous poll runs, and TransientError backs polling off.  The
    worker reads the provider's samples (``SupportsTelemetry``), stores them
    (history survives a restart), loads stored history the first time, and
    computes the spend curves from the ledger.  Results are appended to numpy
    ring buffers (:mod:`.series`) on the main thread.

Drawing
    A 500 ms timer redraws only when data, window or selection changed and the
    view is visible, so plots redraw at most 2 Hz; pyqtgraph is only touched
    on the main thread (:mod:`.monitor_plots`).

Empty states (no selection, not running, no telemetry, waiting) show a
message instead of an empty plot.

Multi-node launches: the "Node" box (:mod:`.nodes_overview`) picks one node of the selected
instance's launch, or "All nodes", an overview table of every node's latest readings; in the
overview the nodes are polled in turn.
"""

from __future__ import annotations

import logging
import math
import time
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSplitter, QStackedWidget, QVBoxLayout, QWidget
from shiboken6 import isValid

from workbench.core.domain.errors import TransientError, WorkbenchError
from workbench.core.domain.models import GpuSample, Instance, InstanceState
from workbench.ui.common.job_state import queue_text, snapshot_state_text
from workbench.ui.i18n import N_, tr
from workbench.core.telemetry.series import SampleBatch, SeriesKey, SeriesSet, SpendCurves, group_samples
from workbench.ui.monitor.advice_panel import AdvicePanel
from workbench.ui.monitor.monitor_poll import InstanceKey, PollResult, instance_key, poll_instance
from workbench.ui.monitor.nodes_overview import ALL, NodeSelector, NodesOverview
from workbench.ui.runtime.session import Session, Snapshot
from workbench.core.domain.cluster import node_rank_of

if TYPE_CHECKING:
    from workbench.ui.monitor.evidence_highlight import EvidenceHighlight
    from workbench.ui.monitor.monitor_plots import MonitorPlots

log = logging.getLogger("workbench.ui.monitor.monitor_view")

REDRAW_MS = 500  # ≤ 2 Hz
DEFAULT_POLL_MS = 1000
MAX_BACKOFF_S = 60.0
#: (label, seconds; None = everything held)
WINDOWS = ((N_("5 min"), 300.0), (N_("1 hour"), 3600.0), (N_("All"), None))


def _order(inst: Instance) -> tuple:
    """Active first, then still billable, then the rest; newest first within each."""
    return (not inst.state.active, not inst.state.billable, -(inst.launched_at or 0.0), inst.name)


class MonitorView(QWidget):
    """Telemetry and spend plots of one instance, picked in a combo box or by :meth:`show_instance`."""

    def __init__(self, session: Session, parent: QWidget | None = None, poll_ms: int | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("monitor-view")
        self.session = session
        if poll_ms is None:
            try:
                poll_ms = int(session.settings.q.value("monitor/poll_ms", DEFAULT_POLL_MS))
            except (TypeError, ValueError):
                poll_ms = DEFAULT_POLL_MS
        self.poll_ms = max(200, poll_ms)
        self.series: dict[InstanceKey, SeriesSet] = {}
        self.spend: dict[InstanceKey, SpendCurves] = {}
        self.telemetry: dict[InstanceKey, bool] = {}
        self.instance: Instance | None = None
        self.redraw_count = 0
        self.polling = False
        self._history_loaded: set[InstanceKey] = set()
        self._settled: dict[InstanceKey, InstanceState] = {}  # inactive instances polled once in this state
        self._dirty = True
        self._retry_at = 0.0
        self._backoff_s = 0.0
        self._last_error = ""
        self._budget_shown: tuple[float | None, str] | None = None

        self.instance_box = QComboBox()
        self.instance_box.setObjectName("monitor-instance")
        self.instance_box.setMinimumContentsLength(30)
        self.instance_box.currentIndexChanged.connect(self._picked)
        self.window_box = QComboBox()
        self.window_box.setObjectName("monitor-window")
        for label, seconds in WINDOWS:
            self.window_box.addItem(tr(label), seconds)
        self.window_box.setCurrentIndex(self._saved_window())
        self.window_box.currentIndexChanged.connect(self._window_changed)
        self.status = QLabel()
        self.status.setObjectName("monitor-status")
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.node_box = NodeSelector()
        self.node_box.currentIndexChanged.connect(self._node_picked)
        self.node_label = QLabel(tr("&Node:"))
        self.node_label.setBuddy(self.node_box)
        self.overview = False  # showing every node of the instance's launch
        self._overview_turn = 0
        top = QHBoxLayout()
        for text, box in ((tr("&Instance:"), self.instance_box), (None, self.node_box),
                          (tr("Time &window:"), self.window_box)):
            label = self.node_label if text is None else QLabel(text)
            label.setBuddy(box)
            top.addWidget(label)
            top.addWidget(box, 1 if box is self.instance_box else 0)
        top.addWidget(self.status, 1)

        self.message = QLabel()
        self.message.setObjectName("monitor-message")
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.banner = QLabel()
        self.banner.setObjectName("monitor-banner")
        self.banner.setWordWrap(True)
        self.banner.hide()
        self._plots: MonitorPlots | None = None  # built on first use: pyqtgraph costs ~0.2 s to import
        plots_page = QWidget()
        pl = QVBoxLayout(plots_page)
        pl.setContentsMargins(0, 0, 0, 0)
        pl.addWidget(self.banner)
        self._plots_layout = pl
        self.nodes_overview = NodesOverview()
        self.pages = QStackedWidget()
        self.pages.addWidget(self.message)
        self.pages.addWidget(plots_page)
        self.pages.addWidget(self.nodes_overview)
        self.advice = AdvicePanel(session)  # advice cards beside the plots (issue 20)
        self.advice.highlight.connect(self._highlight)
        self.advice.cleared.connect(self._clear_highlight)
        self._evidence: EvidenceHighlight | None = None
        body = QSplitter(Qt.Orientation.Horizontal, objectName="monitor-split")
        body.addWidget(self.pages)
        body.addWidget(self.advice)
        body.setStretchFactor(0, 1)
        body.setSizes([700, 300])
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(body, 1)

        self.poll_timer = QTimer(self)
        self.poll_timer.timeout.connect(self.poll)
        self.poll_timer.start(self.poll_ms)
        self.redraw_timer = QTimer(self)
        self.redraw_timer.timeout.connect(self._redraw_if_needed)
        self.redraw_timer.start(REDRAW_MS)
        session.snapshot_changed.connect(self._on_snapshot)
        self._on_snapshot(session.snapshot)
        self._update_page()

    # -- selection ----------------------------------------------------------
    @property
    def plots(self) -> "MonitorPlots":
        """The pyqtgraph plots, created (and pyqtgraph imported) the first time they are needed."""
        if self._plots is None:
            from workbench.ui.monitor.monitor_plots import MonitorPlots

            self._plots = MonitorPlots(opengl=str(self.session.settings.q.value("monitor/opengl", "auto")))
            self._plots_layout.addWidget(self._plots, 1)
        return self._plots

    def show_instance(self, inst: Instance) -> None:
        """Select ``inst`` (adding it to the list if the snapshot does not have it yet) and poll now."""
        key = instance_key(inst)
        row = self._row_of(key)
        if row < 0:
            self.instance_box.addItem(self._item_text(inst), key)
            row = self.instance_box.count() - 1
        self._instances[key] = inst
        if row == self.instance_box.currentIndex():
            self._select(inst)
        else:
            self.instance_box.setCurrentIndex(row)

    def _row_of(self, key: InstanceKey) -> int:
        box = self.instance_box
        return next((row for row in range(box.count()) if box.itemData(row) == key), -1)

    def _item_text(self, inst: Instance) -> str:
        # the word Instances uses for it ("finished · exit 0"), not the machine's bare state ("terminated")
        return tr("{name} — {provider}/{profile} · {type} · {state}").format(
            name=inst.name or inst.instance_id, provider=inst.provider, profile=inst.profile,
            type=inst.instance_type, state=snapshot_state_text(inst, getattr(self, "_snapshot", None)))

    def _on_snapshot(self, snap: Snapshot) -> None:
        self._snapshot = snap
        self._instances: dict[InstanceKey, Instance] = {instance_key(i): i for i in snap.instances}
        if self.instance is not None:
            self._instances.setdefault(instance_key(self.instance), self.instance)
        current = self.instance_box.currentData()
        self.instance_box.blockSignals(True)
        self.instance_box.clear()
        self.instance_box.addItem(tr("Choose an instance…"), None)
        for inst in sorted(self._instances.values(), key=_order):
            self.instance_box.addItem(self._item_text(inst), instance_key(inst))
        self.instance_box.setCurrentIndex(max(0, self._row_of(current)) if current else 0)
        self.instance_box.blockSignals(False)
        if self.instance is not None:
            fresh = self._instances[instance_key(self.instance)]
            changed = fresh.state != self.instance.state
            self.instance = fresh
            if changed:
                self._dirty = True
                self._update_page()
                self.advice.set_instance(fresh)
                QTimer.singleShot(0, self.poll)
        self._update_budget()
        if self.instance is not None:
            self._show_node_box()
            if self.overview:
                self._update_page()

    def _picked(self, row: int) -> None:
        key = self.instance_box.itemData(row)
        self._select(self._instances.get(key) if key else None)

    def launch_nodes(self, inst: Instance | None) -> list[Instance]:
        """Every node of ``inst``'s launch in rank order ([inst] for a single machine)."""
        if inst is None:
            return []
        nodes = [i for i in self._instances.values() if i.launch_id == inst.launch_id and inst.launch_id]
        if len(nodes) < 2 or not any(node_rank_of(i.extra) for i in nodes):
            return [inst]
        return sorted(nodes, key=lambda i: node_rank_of(i.extra))

    def _show_node_box(self) -> None:
        nodes = self.launch_nodes(self.instance)
        self.node_box.show_nodes(nodes, self.instance, self.overview)
        self.node_label.setVisible(len(nodes) > 1)
        if len(nodes) < 2:
            self.overview = False

    def _node_picked(self, row: int) -> None:
        data = self.node_box.itemData(row)
        if data == ALL:
            self.show_overview()
        elif isinstance(data, Instance):
            self.overview = False
            self.show_instance(self._instances.get(instance_key(data), data))

    def show_overview(self) -> None:
        """Every node of the selected instance's launch side by side (they are polled in turn)."""
        if len(self.launch_nodes(self.instance)) < 2:
            return
        self.overview = True
        self._show_node_box()
        self._update_page()
        QTimer.singleShot(0, self.poll)

    def _select(self, inst: Instance | None) -> None:
        if inst is None or self.instance is None or instance_key(inst) != instance_key(self.instance):
            if self._plots is not None:
                self._plots.clear()
            self._budget_shown = None
            if inst is None or self.instance is None or inst.launch_id != self.instance.launch_id:
                self.overview = False
        self.instance = inst
        self.advice.set_instance(inst)
        self._retry_at, self._backoff_s, self._last_error = 0.0, 0.0, ""
        self.status.clear()
        self._dirty = True
        self._update_budget()
        self._show_node_box()
        self._update_page()
        if inst is not None:
            QTimer.singleShot(0, self.poll)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt)
        super().showEvent(event)
        if self.instance is None:  # opened from the sidebar: show the newest running job
            active = [i for i in self._instances.values() if i.state.active]
            if active:
                self.show_instance(sorted(active, key=_order)[0])
        self._dirty = True

    # -- window -------------------------------------------------------------
    def _saved_window(self) -> int:
        try:
            idx = int(self.session.settings.q.value("monitor/window", 0))
        except (TypeError, ValueError):
            idx = 0
        return idx if 0 <= idx < len(WINDOWS) else 0

    def _window_changed(self, idx: int) -> None:
        self.session.settings.q.setValue("monitor/window", idx)
        self._dirty = True
        self._redraw_if_needed()  # a user action: answer it now, the 2 Hz limit is for data

    @property
    def window_seconds(self) -> float | None:
        return self.window_box.currentData()

    # -- advice evidence ----------------------------------------------------
    def _highlight(self, start: float, end: float) -> None:
        """Shade an advice's evidence window; widen the time window to "All" when it starts before it."""
        if self._evidence is None:
            from workbench.ui.monitor.evidence_highlight import EvidenceHighlight

            self._evidence = EvidenceHighlight(self.plots)
        self._evidence.show(start, end)
        sets = self.series.get(instance_key(self.instance)) if self.instance is not None else None
        seconds = self.window_seconds
        if seconds is not None and sets is not None and sets.last_ts is not None:
            shown_from = (time.time() if self.instance.state.active else sets.last_ts) - seconds
            if start < shown_from:
                self.window_box.setCurrentIndex(len(WINDOWS) - 1)
        self._dirty = True

    def _clear_highlight(self) -> None:
        if self._evidence is not None:
            self._evidence.clear()

    # -- polling ------------------------------------------------------------
    def poll(self) -> None:
        """Start one poll of the selected instance unless one is running (then this tick is skipped).

        In the overview, each tick polls the next node of the launch; the turn moves on only when that node
        is polled or has nothing to ask (moved on skipped ticks, a slow poll could catch the same node each time).
        """
        inst, turn = self.instance, None
        if self.overview and inst is not None:
            nodes = self.launch_nodes(inst)
            turn = (self._overview_turn + 1) % len(nodes)
            inst = nodes[turn]
        if inst is None or self.polling or self.session.accounts is None or time.monotonic() < self._retry_at:
            return
        key = instance_key(inst)
        if not inst.state.active and (self._settled.get(key) == inst.state or (turn is not None
                                                                              and key in self._history_loaded)):
            self._overview_turn = turn if turn is not None else self._overview_turn
            return  # nothing new can come from a stopped machine
        remote = getattr(self.session, "remote", None)
        extra = {}
        if remote is not None:  # SSH telemetry of cloud machines: only what is newer than the rings hold
            sets = self.series.get(key)
            extra = {"hub": remote.hub, "since": (sets.last_ts if sets is not None else None) or -math.inf}
        try:
            task = self.session.run(poll_instance, self.session.accounts, inst, key not in self._history_loaded,
                                    **extra)
        except RuntimeError:  # the session's runner was shut down (app closing): stop asking
            self.poll_timer.stop()
            return
        self.polling = True
        if turn is not None:
            self._overview_turn = turn
        task.then(self._polled).fail(self._poll_failed).finally_(self._poll_done)

    def _poll_done(self) -> None:
        self.polling = False

    def _polled(self, res: PollResult) -> None:
        if not isValid(self):
            return
        self._history_loaded.add(res.key)
        changed = self._add(res.key, res.history) + self._add(res.key, res.live) > 0
        if res.telemetry is not None:
            changed |= self.telemetry.get(res.key) != res.telemetry
            self.telemetry[res.key] = res.telemetry
        if res.spend is not None:
            old = self.spend.get(res.key)
            changed |= old is None or not (np.array_equal(old.cost, res.spend.cost)
                                           and np.array_equal(old.burn, res.spend.burn))
            self.spend[res.key] = res.spend
        if not res.state.active and res.error is None:
            self._settled[res.key] = res.state
        if self.overview:
            self._update_page()
        elif self.instance is not None and res.key == instance_key(self.instance):
            self._show_error(res.error)
            if changed:
                self._dirty = True
                self._update_page()

    def _add(self, key: InstanceKey, batches: dict[SeriesKey, SampleBatch]) -> int:
        return self.series.setdefault(key, SeriesSet()).add(batches) if batches else 0

    def add_samples(self, inst: Instance, samples: list[GpuSample]) -> int:
        """Append readings of ``inst`` received by other means (main thread); returns how many were new.

        Drawing still happens on the redraw timer, so a flood of readings costs at most 2 redraws a second.
        """
        key = instance_key(inst)
        added = self._add(key, group_samples(samples))
        if added and self.instance is not None and key == instance_key(self.instance):
            self._dirty = True
            self._update_page()
        return added

    def _poll_failed(self, exc: BaseException) -> None:
        if isValid(self):
            log.warning("telemetry poll failed: %s", exc)
            self._show_error(exc if isinstance(exc, WorkbenchError) else WorkbenchError(str(exc)))

    def _show_error(self, exc: WorkbenchError | None) -> None:
        if exc is None:
            self._backoff_s = 0.0
            self.status.clear()
            return
        if isinstance(exc, TransientError):
            self._backoff_s = min(MAX_BACKOFF_S, max(2 * self._backoff_s, 2.0))
            self._retry_at = time.monotonic() + self._backoff_s
        text = str(exc)
        if text != self._last_error:
            log.warning("telemetry of %s: %s", self.instance.instance_id if self.instance else "?", text)
            self._last_error = text
        self.status.setText(tr("Telemetry problem: {message}").format(message=text))
        self.status.setToolTip(getattr(exc, "hint", "") or "")

    # -- pages --------------------------------------------------------------
    def _update_page(self) -> None:
        """Message page for the empty states, plots otherwise (cheap: no pyqtgraph work)."""
        inst = self.instance
        if inst is None:
            return self._message(tr("No instance selected. Pick one above, or choose Monitor on a row of "
                                    "the Instances view."))
        if self.overview:
            self.nodes_overview.show_nodes(self.launch_nodes(inst), self.series)
            self.pages.setCurrentIndex(2)
            return None
        key = instance_key(inst)
        sets = self.series.get(key)
        has_data = sets is not None and sets.last_ts is not None
        if not has_data:
            name, state = inst.name or inst.instance_id, snapshot_state_text(inst, getattr(self, "_snapshot", None))
            if not inst.state.active:
                return self._message(tr("{name} is not running ({state}) and no readings were recorded "
                                        "while it ran.").format(name=name, state=state))
            if (queued := queue_text(inst)) is not None:  # a batch job waits in its queue: no GPU of its own yet
                return self._message(tr("{name} is {state}. Readings start when it runs.").format(name=name, state=queued))
            if self.telemetry.get(key) is False:
                return self._message(tr("The {provider} provider does not report GPU telemetry, so there is "
                                        "nothing to plot for {name}. Its spend is still tracked.").format(
                                            provider=inst.provider, name=name))
            return self._message(tr("Waiting for the first reading from {name}…").format(name=name))
        if not inst.state.active:
            self.banner.setText(tr("{name} is not running ({state}): showing its recorded history.").format(
                name=inst.name or inst.instance_id, state=snapshot_state_text(inst, getattr(self, "_snapshot", None))))
            self.banner.show()
        else:
            self.banner.hide()
        self.pages.setCurrentIndex(1)

    def _message(self, text: str) -> None:
        self.message.setText(text)
        self.pages.setCurrentIndex(0)

    def _update_budget(self) -> None:
        inst = self.instance
        budget = None
        rec = self._snapshot.launches.get(inst.launch_id) if inst is not None else None
        if rec is not None and isinstance(rec.spec, dict):
            value = (rec.spec.get("guards") or {}).get("budget_usd")
            budget = float(value) if isinstance(value, (int, float)) else None
        currency = inst.currency if inst is not None else "USD"
        if inst is None and self._plots is None:
            return  # nothing shown yet: do not build the plots just to clear a budget line
        if (budget, currency) != self._budget_shown:
            self._budget_shown = (budget, currency)
            self.plots.set_budget(budget, currency)
            self._dirty = True

    # -- drawing ------------------------------------------------------------
    def _redraw_if_needed(self) -> None:
        if self._dirty and self.isVisible() and self.pages.currentIndex() == 1:
            self.redraw()

    def redraw(self) -> None:
        """Hand the current window to the plots (main thread; called at most 2 Hz by the timer)."""
        self._dirty = False
        inst = self.instance
        sets = self.series.get(instance_key(inst)) if inst is not None else None
        if sets is None or sets.last_ts is None:
            return
        spend = self.spend.get(instance_key(inst))
        # a machine that no longer runs: its window ends with its last reading or ledger entry (a spend
        # curve's last point is the poll's "now", after which nothing happened)
        last_entry = spend.t[-2] if spend is not None and spend.t.size >= 2 else 0.0
        end = time.time() if inst.state.active else max(sets.last_ts, float(last_entry))
        seconds = self.window_seconds
        firsts = [t for t in (sets.first_ts, spend.t[0] if spend and spend.t.size else None) if t is not None]
        first = min(firsts) if firsts else end
        if seconds is not None and (inst.state.active or end - first >= seconds):
            start = end - seconds
        else:  # "All", or a machine that ran for less than the window: its whole span fills the plot
            start = first
        self.plots.draw(sets, spend, start, end)
        self.redraw_count += 1
