"""Qt table model over the session's instances (a thin adapter, no item widgets).

Rows are keyed by (provider, profile, instance_id).  The machines of a multi-node launch are
grouped under their launch: the head first (its name says how many machines), then each other
node indented under it, in rank order; sorting by a column keeps a launch's nodes together
(they sort by the head's value) and a filter that matches the head keeps its nodes.  A refresh with the same
rows in the same order only emits ``dataChanged`` (selection and scroll stay);
otherwise the model resets and the view restores its selection by key.
``SORT_ROLE`` gives raw values so sorting by uptime or money is numeric.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication, QPalette

from workbench.core.domain.cluster import node_rank_of
from workbench.core.domain.models import image_from_dict
from workbench.core.domain.models import ContainerImage, Instance, InstanceState
from workbench.core.lifecycle.outcome import Outcome, job_outcome
from workbench.core.money.billing_status import costs_money
from workbench.core.lifecycle.attempts import attempt_of
from workbench.core.store.database import LaunchRecord
from workbench.ui.common.format import duration, image_text, money, state_label
from workbench.ui.common.icons import icon
from workbench.ui.common.job_state import OUTCOME_LOOK, outcome_text, queue_tip, state_text  # noqa: F401 (re-exported)
from workbench.ui.common.table_model import RowTableModel
from workbench.ui.i18n import N_, tr
from workbench.ui.runtime.session import Snapshot

INSTANCE_ROLE = Qt.ItemDataRole.UserRole + 1
SORT_ROLE = Qt.ItemDataRole.UserRole + 2

COLUMNS = (N_("Name"), N_("Provider / profile"), N_("Region"), N_("Type"), N_("GPUs"), N_("State"),
           N_("Uptime"), N_("$/h"), N_("Spend so far"), N_("Guards"))
COL_STATE = 5



def name_text(inst: Instance, launch: LaunchRecord | None) -> str:
    """The machine's name, and "attempt N" when recovery relaunched its launch."""
    name = inst.name or inst.instance_id
    got = attempt_of(inst.launch_id, launch.spec if launch is not None else None)
    return name if got is None else tr("{name} · attempt {n}").format(name=name, n=got[0])


def guard_text(inst: Instance, launch: LaunchRecord | None, spent: float, now: float) -> str:
    """What will stop this machine's bill: time left of the max runtime, idle rule, budget use."""
    if not inst.state.billable or launch is None or not launch.spec:
        return "–"
    g = launch.spec.get("guards") or {}
    parts = []
    max_min = g.get("max_runtime_minutes")
    if max_min and inst.launched_at:
        left = inst.launched_at + max_min * 60 - now
        parts.append(tr("stops in {left}").format(left=duration(max(0.0, left))))
    elif not max_min:
        parts.append(tr("no runtime limit"))
    if g.get("idle_minutes"):
        parts.append(tr("idle {minutes} min").format(minutes=g["idle_minutes"]))
    if g.get("budget_usd"):
        parts.append(tr("budget {used} %").format(used=int(100 * spent / g["budget_usd"])))
    return " · ".join(parts)


def image_of(launch: LaunchRecord | None) -> ContainerImage | None:
    """The container image of a launch, from its stored spec (None: none, or a spec without one)."""
    try:
        return image_from_dict((launch.spec or {}).get("image")) if launch is not None else None
    except (KeyError, TypeError, ValueError):  # a record written by another version: no image to show
        return None


def _key(inst: Instance) -> tuple[str, str, str]:
    return (inst.provider, inst.profile, inst.instance_id)


def _grouped(instances: list[Instance]) -> tuple[list[Instance], dict[str, list[Instance]]]:
    """Rows in display order (launches newest first, billable first; a launch's nodes together, head
    first) and the nodes of each multi-node launch in rank order."""
    by_launch: dict[str, list[Instance]] = {}
    for inst in instances:
        by_launch.setdefault(inst.launch_id or inst.instance_id, []).append(inst)
    groups = []
    for lid, members in by_launch.items():
        members.sort(key=lambda i: (node_rank_of(i.extra), i.instance_id))
        head = members[0]
        billable = any(i.state.billable for i in members)
        groups.append(((not billable, -(head.launched_at or 0), lid), members))
    groups.sort(key=lambda g: g[0])
    rows = [i for _, members in groups for i in members]
    nodes = {lid: m for lid, m in by_launch.items() if len(m) > 1 and any(node_rank_of(i.extra) for i in m)}
    return rows, nodes


class InstancesModel(RowTableModel):
    """Instances of the latest snapshot, newest launch first."""

    columns = COLUMNS

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[Instance] = []
        self._nodes: dict[str, list[Instance]] = {}  # launch id -> its nodes (multi-node launches only)
        self._snap = Snapshot()
        self._now = time.time()
        self.open_ports: dict[str, str] = {}  # launch id → its ports forwarded here (Instances ▸ Open port…)

    # -- feeding --------------------------------------------------------------
    def set_snapshot(self, snap: Snapshot, now: float | None = None) -> None:
        rows, self._nodes = _grouped(list(snap.instances))
        self._snap = snap
        self._now = time.time() if now is None else now
        if [_key(i) for i in rows] == [_key(i) for i in self._rows]:
            self._rows = rows
            if rows:
                self.dataChanged.emit(self.index(0, 0), self.index(len(rows) - 1, len(COLUMNS) - 1))
            return
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def tick(self, now: float | None = None) -> None:
        """Advance the clock for uptime and guard countdowns without a refresh."""
        self._now = time.time() if now is None else now
        if self._rows:
            self.dataChanged.emit(self.index(0, 6), self.index(len(self._rows) - 1, len(COLUMNS) - 1))

    def instance(self, row: int) -> Instance:
        return self._rows[row]

    def instances(self) -> list[Instance]:
        return list(self._rows)

    def nodes_of(self, inst: Instance) -> list[Instance]:
        """Every node of ``inst``'s launch in rank order ([inst] for a single machine)."""
        return list(self._nodes.get(inst.launch_id, [inst]))

    def head_of(self, inst: Instance) -> Instance:
        return self.nodes_of(inst)[0]

    def name_cell(self, inst: Instance) -> str:
        """The Name cell: a multi-node launch's head names the launch and its size; the others hang under it."""
        if inst.launch_id in self._snap.controllers:  # the account's controller, not a job of the user's
            return tr("controller of {profile}").format(profile=inst.profile)
        name = name_text(inst, self._snap.launches.get(inst.launch_id))
        nodes = self._nodes.get(inst.launch_id)
        if not nodes:
            return name
        rank = node_rank_of(inst.extra)
        if rank == 0:
            return tr("{name} · {n} machines · node 0").format(name=name, n=len(nodes))
        return "    └ " + tr("node {rank}").format(rank=rank)

    def _outcome(self, inst: Instance) -> Outcome | None:
        launch = self._snap.launches.get(inst.launch_id)
        return job_outcome(inst, launch.status if launch else None, self._snap.guard_ended.get(inst.launch_id),
                           self._snap.relaunched.get(inst.launch_id))

    def _state_text(self, inst: Instance) -> str:
        if inst.launch_id in self._snap.controllers:
            return tr("controller · machine {state}").format(state=state_label(inst.state))
        text = state_text(inst, self._snap.launches.get(inst.launch_id), self._snap.guard_ended.get(inst.launch_id),
                          self._snap.relaunched.get(inst.launch_id))
        if inst.launch_id in self._snap.watched and inst.state.billable:
            text += " · " + tr("watched by the controller")
        return text

    def _controller_tip(self, inst: Instance) -> str | None:
        """The row's tooltip line about the controller: it is one, or it watches this launch."""
        if inst.launch_id in self._snap.controllers:
            return tr("The controller of {profile}: a small machine in this account that watches the launches "
                      "handed to it while this computer is off (Accounts ▸ Controller).").format(profile=inst.profile)
        watcher = self._snap.watched.get(inst.launch_id)
        if watcher is not None:
            return tr("Watched by the controller of {profile}: it relaunches and ends this launch while this "
                      "computer is off.").format(profile=watcher)
        return None

    # -- Qt model API -----------------------------------------------------------
    def _uptime(self, inst: Instance) -> float | None:
        if inst.launched_at and inst.state.billable:
            return max(0.0, self._now - inst.launched_at)
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        inst = self._rows[index.row()]
        col = index.column()
        if role == INSTANCE_ROLE:
            return inst
        spent = self._snap.spend_of(inst)
        if role == Qt.ItemDataRole.DisplayRole:
            up = self._uptime(inst)
            return (
                self.name_cell(inst),
                f"{inst.provider} / {inst.profile}",
                inst.region,
                inst.instance_type,
                f"{inst.gpu_count}× {inst.gpu_model}" if inst.gpu_count else tr("none"),
                self._state_text(inst),
                duration(up) if up is not None else "–",
                money(inst.price_per_hour, inst.currency) + ("" if not inst.spot else " " + tr("(spot)")),
                money(spent, inst.currency),
                guard_text(inst, self._snap.launches.get(inst.launch_id), spent, self._now),
            )[col]
        if role == SORT_ROLE:
            # a launch's nodes sort by their head's value, then stay in rank order under it
            return (self._sort_value(self.head_of(inst), col), inst.launch_id, node_rank_of(inst.extra))
        if role in (Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.DecorationRole) and col == COL_STATE:
            out = self._outcome(inst)
            if out is not None and not costs_money(inst):
                light, dark, icon_name = OUTCOME_LOOK[out.kind]
                is_dark = QGuiApplication.palette().color(QPalette.ColorRole.Base).lightness() < 128
                color = dark if is_dark else light
                return QBrush(QColor(color)) if role == Qt.ItemDataRole.ForegroundRole else icon(icon_name, color)
        if role == Qt.ItemDataRole.ForegroundRole:
            if col == COL_STATE and costs_money(inst):  # a free job on this computer is running, not billing
                dark = QGuiApplication.palette().color(QPalette.ColorRole.Base).lightness() < 128
                return QBrush(QColor("#ff8a65" if dark else "#c62828"))
            if not inst.state.billable:
                return QGuiApplication.palette().brush(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        if role == Qt.ItemDataRole.FontRole and col == COL_STATE and costs_money(inst):
            f = QFont()
            f.setBold(True)
            return f
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = [self._state_text(inst)] if col == COL_STATE else []
            tip += [f"{inst.provider}/{inst.profile} · {inst.instance_id}", tr("launch {id}").format(id=inst.launch_id)]
            nodes = self._nodes.get(inst.launch_id)
            if nodes:
                tip.append(tr("node {rank} of the launch's {n} machines: Terminate and Stop act on all of "
                              "them").format(rank=node_rank_of(inst.extra), n=len(nodes)))
            launch = self._snap.launches.get(inst.launch_id)
            got = attempt_of(inst.launch_id, launch.spec if launch is not None else None)
            if got is not None:
                tip.append(tr("attempt {n} of {root}: relaunched after an interruption (Spend lists every "
                              "attempt)").format(n=got[0], root=got[1]))
            if (image := image_of(launch)) is not None:
                tip.append(tr("Image: {image}").format(image=image_text(image)))
            if (about := self._controller_tip(inst)) is not None:
                tip.append(about)
            tip += queue_tip(inst)
            if costs_money(inst):
                tip.append(tr("Billing now at {rate}").format(rate=money(inst.price_per_hour, inst.currency)))
            if inst.host:
                tip.append(tr("Address: {host}").format(host=inst.host))
            if (forwarded := self.open_ports.get(inst.launch_id)) is not None:
                tip.append(tr("Open ports (127.0.0.1 only): {ports}").format(ports=forwarded))
            if inst.extra.get("billing_note"):
                tip.append(str(inst.extra["billing_note"]))  # e.g. Azure: Stopped still bills until deallocated
            return "\n".join(tip)
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (4, 6, 7, 8):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _sort_value(self, inst: Instance, col: int) -> Any:
        up = self._uptime(inst)
        spent = self._snap.spend_of(inst)
        state_rank = (0 if inst.state.billable else 100) + list(InstanceState).index(inst.state)
        return (inst.name or inst.instance_id, f"{inst.provider}/{inst.profile}", inst.region,
                inst.instance_type, inst.gpu_count, state_rank, up or 0.0, inst.price_per_hour, spent,
                guard_text(inst, self._snap.launches.get(inst.launch_id), spent, self._now))[col]


class InstancesFilter(QSortFilterProxyModel):
    """Case-insensitive text filter over every column, plus "billable only"."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(-1)
        self.billable_only = False

    def set_billable_only(self, on: bool) -> None:
        self.beginFilterChange()
        self.billable_only = on
        self.endFilterChange()

    def filterAcceptsRow(self, row: int, parent: QModelIndex) -> bool:  # noqa: N802
        model = self.sourceModel()
        inst = model.index(row, 0, parent).data(INSTANCE_ROLE)
        if self.billable_only and inst is not None and not inst.state.billable:
            return False
        if super().filterAcceptsRow(row, parent):
            return True
        if inst is not None and isinstance(model, InstancesModel) and node_rank_of(inst.extra) > 0:
            head = model.head_of(inst)  # a node shows when its launch's head matches the filter
            rows = model.instances()
            if head is not inst and head in rows:
                return super().filterAcceptsRow(rows.index(head), parent)
        return False

    def lessThan(self, left: QModelIndex, right: QModelIndex) -> bool:  # noqa: N802
        a, b = left.data(SORT_ROLE), right.data(SORT_ROLE)
        if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) == 3 and a[1] == b[1]:
            # nodes of one launch: the head first whichever way the column sorts (Qt flips descending)
            return (a[2] < b[2]) == (self.sortOrder() == Qt.SortOrder.AscendingOrder)
        try:
            return a < b
        except TypeError:
            return str(a) < str(b)
