"""Wizard page 4: what will be created, what it can cost, and the launch's progress.

The page shows the wizard's draft (provider, region, type, GPUs, disk, spot,
on_finish, guards) and the projected cost for the maximum runtime.  The launch
starts only from the page's :attr:`ReviewPage.launch_action` ("Launch"; the
wizard's Launch button triggers it); ``validatePage`` has no side effect and
lets the wizard finish only once the wizard has said the launch succeeded
(:meth:`ReviewPage.set_run_state`).  Progress, failure and the rollback check
are shown in :class:`LaunchProgressPanel`.  Main thread only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import (QFormLayout, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QProgressBar,
                               QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget, QWizardPage)

from workbench.core.offers.query import RankedOffer, interconnect, interconnect_note
from workbench.core.offers.choice import describe_match, effective_spot
from workbench.core.providers.price_snapshot import describe_date
from workbench.core.lifecycle.launcher import LAUNCH_STEPS, STEP_PROVIDER, STEP_RECORD, STEP_RUNNING, STEP_WAIT
from workbench.core.domain.models import Guards, JobSpec, OnFinish
from workbench.core.money.billing_status import is_own_hardware, on_this_computer
from workbench.core.money.planner import CostComparison, compare_costs
from workbench.core.money.spend import projected_cost
from workbench.ui.common.format import duration, image_text, money, say, say_all
from workbench.ui.common.icons import icon
from workbench.ui.i18n import N_, tr
from workbench.ui.common.inline_messages import InlineMessage
from workbench.ui.launch.launch_draft import Draft, LaunchDraft
from workbench.ui.launch.launch_watch import WatchOption
from workbench.ui.launch.offers_model import your_cluster

ON_FINISH_TEXT = {
    OnFinish.TERMINATE: N_("terminate the machine (billing stops)"),
    OnFinish.STOP: N_("stop the machine (its disks still bill)"),
    OnFinish.KEEP: N_("keep the machine running (it bills until a guard or you stop it)"),
}
#: a job on this computer has no machine to terminate or stop: its run simply ends
ON_FINISH_HERE = N_("end the job (nothing keeps running or billing)")
#: a batch job on the user's cluster: its nodes go back to the cluster's queue
ON_FINISH_CLUSTER = N_("end the batch job (its nodes go back to the cluster)")
_MARKS = {"pending": "○", "active": "▶", "done": "✓", "failed": "✗", "skipped": "–"}


def guards_text(g: Guards) -> str:
    parts = [tr("stops after {time}").format(time=duration(g.max_runtime_minutes * 60))
             if g.max_runtime_minutes else tr("no runtime limit")]
    parts.append(tr("idle shutdown after {minutes} min below {util} % GPU use").format(
        minutes=g.idle_minutes, util=f"{g.idle_util_below:g}") if g.idle_minutes else tr("no idle shutdown"))
    parts.append(tr("budget {amount}").format(amount=money(g.budget_usd)) if g.budget_usd else tr("no budget"))
    return " · ".join(parts)


def recovery_text(spec: JobSpec) -> str:
    r = spec.recovery
    if r is None:  # the warning is for spot machines, the only ones a cloud takes back
        return tr("off: an interrupted spot machine ends the job") if spec.resources.spot else tr("off")
    on = tr("a spot interruption or a failure") if "failure" in r.on else tr("a spot interruption")
    return tr("relaunch after {on}, up to {n} times, on the cheapest allowed offer (while this app, "
              "`workbench watch` or the account's controller watches it)").format(on=on, n=r.max_restarts)


def cost_text(choice: RankedOffer, g: Guards, nodes: int = 1) -> str:
    """``$6.12 if it runs the full 2 h 00 min ($3.060/h × 2 h)``; a warning when nothing caps it.

    Several machines: ``$24.48 if it runs the full 2 h 00 min (4 machines × $3.060/h × 2 h)``.
    """
    cur = choice.offer.prices.currency
    if choice.price is None:
        return tr("Unknown: this offer has no price for this term.")
    hourly = choice.price * max(1, nodes)
    if g.max_runtime_minutes is None:
        return tr("Not capped: {price} per hour until the job ends or you stop it.").format(
            price=money(hourly, cur, 3))
    cost = projected_cost(choice.price, g.max_runtime_minutes, nodes)
    hours = f"{g.max_runtime_minutes / 60:.2f}".rstrip("0").rstrip(".")
    if nodes > 1:
        return tr("{cost} if it runs the full {time} ({n} machines × {price}/h × {hours} h)").format(
            cost=money(cost, cur), time=duration(g.max_runtime_minutes * 60), n=nodes,
            price=money(choice.price, cur, 3), hours=hours)
    return tr("{cost} if it runs the full {time} ({price}/h × {hours} h)").format(
        cost=money(cost, cur), time=duration(g.max_runtime_minutes * 60), price=money(choice.price, cur, 3),
        hours=hours)


class LaunchProgressPanel(QGroupBox):
    """Step-by-step progress of one launch, its result, and the rollback check."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(tr("Launch progress"), parent)
        self.setObjectName("launch-progress")
        layout = QVBoxLayout(self)
        self.steps: dict[str, QLabel] = {}
        self.step_text: dict[str, str] = {}
        self.state: dict[str, str] = {}  # step key → pending | active | done | failed | skipped
        for key in LAUNCH_STEPS:
            label = QLabel(objectName=f"step-{key}")
            self.steps[key] = label
            layout.addWidget(label)
        self.busy = QProgressBar(objectName="launch-busy", minimum=0, maximum=0, textVisible=False)
        self.status = QLabel(objectName="launch-status", wordWrap=True)
        self.error = InlineMessage("error", "launch-error")
        self.rollback = QLabel(objectName="rollback-result", wordWrap=True)
        self.rollback.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tear_down = QPushButton(icon("terminate"), tr("&Tear down what remains"), objectName="tear-down-remains")
        self.tear_down.setVisible(False)
        row = QHBoxLayout()
        row.addWidget(self.rollback, 1)
        row.addWidget(self.tear_down)
        layout.addWidget(self.busy)
        layout.addWidget(self.status)
        layout.addWidget(self.error)
        layout.addLayout(row)

    def begin(self, provider: str) -> None:
        self.step_text = {
            STEP_RECORD: tr("Recording the launch"),
            STEP_PROVIDER: tr("Asking {provider} for a machine").format(provider=provider),
            STEP_WAIT: tr("Waiting for it to start"),
            STEP_RUNNING: tr("Running"),
        }
        self.state = {key: "pending" for key in LAUNCH_STEPS}
        self._draw()
        self.busy.setRange(0, 0)  # busy: no measure of how far until an upload gives one
        self.busy.setVisible(True)
        self.status.setText("")
        self.error.show_text(None)
        self.rollback.setText("")
        self.tear_down.setVisible(False)
        self.setVisible(True)

    def _draw(self) -> None:
        for key, label in self.steps.items():
            state = self.state[key]
            label.setText(f"{_MARKS[state]}  {self.step_text[key]}")
            font = QFont(label.font())
            font.setBold(state == "active")
            label.setFont(font)
            label.setEnabled(state not in ("pending", "skipped"))

    def show_fraction(self, fraction: float) -> None:
        """A measured part of the launch (a storage folder's upload): the bar fills and says how far."""
        self.busy.setRange(0, 100)
        self.busy.setValue(round(max(0.0, min(fraction, 1.0)) * 100))
        self.busy.setTextVisible(True)

    def reached(self, key: str) -> None:
        """Steps before ``key`` are done; ``key`` is under way (STEP_RUNNING is done at once)."""
        self.busy.setRange(0, 0)  # the upload is over: busy again, without a measure
        self.busy.setTextVisible(False)
        passed = True
        for k in LAUNCH_STEPS:
            if k == key:
                self.state[k] = "done" if k == STEP_RUNNING else "active"
                passed = False
            elif passed:
                self.state[k] = "done"
        self._draw()

    def fail_current(self) -> None:
        for k in LAUNCH_STEPS:
            if self.state[k] == "active":
                self.state[k] = "failed"
        self._draw()

    def stop_after_current(self) -> None:
        """Cancelled: the step under way completes (the provider answered); the rest will not happen."""
        for k in LAUNCH_STEPS:
            if self.state[k] == "active":
                self.state[k] = "done"
            elif self.state[k] == "pending":
                self.state[k] = "skipped"
        self._draw()

    def idle(self) -> None:
        self.busy.setVisible(False)


OPTION_TEXT = {"on-demand": N_("on-demand"), "spot": N_("spot"), "reserved-1y": N_("reserved 1 year"),
               "reserved-3y": N_("reserved 3 years"), "savings-plan-1y": N_("savings plan 1 year"),
               "savings-plan-3y": N_("savings plan 3 years"), "buy": N_("buy")}


def job_cost_comparison(spec: JobSpec, offers: list[RankedOffer]) -> CostComparison | None:
    """The cost planner's comparison for this job (its GPUs for its maximum runtime); None without GPUs or a limit."""
    g = spec.resources.gpu
    if g is None or not g.model or spec.guards.max_runtime_minutes is None:
        return None
    return compare_costs([(r.profile, r.offer) for r in offers], g.model, g.count * max(1, spec.num_nodes),
                         spec.guards.max_runtime_minutes / 60.0)  # every node's GPUs


class CostComparisonBox(QGroupBox):
    """The cheapest way per option and provider to pay for the job, side by side (the cost planner)."""

    HEADERS = (N_("Option"), N_("Provider"), N_("Region"), N_("Type"), N_("Machines"), N_("Total"), N_("Note"))

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(tr("Ways to pay for this job"), parent)
        self.setObjectName("plan-comparison")
        self.table = QTableWidget(0, len(self.HEADERS), objectName="plan-table")
        self.table.setHorizontalHeaderLabels([tr(h) for h in self.HEADERS])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setMaximumHeight(180)
        self.empty = QLabel(objectName="plan-empty", wordWrap=True)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table)
        lay.addWidget(self.empty)

    def show_comparison(self, p: CostComparison | None, choice: RankedOffer | None, spot: bool,
                        gpu_job: bool = True) -> None:
        rows = p.summary() if p is not None else []
        self.table.setRowCount(len(rows))
        for i, r in enumerate(rows):
            cells = (tr(OPTION_TEXT[r.option]), r.provider or "–", r.region or "–",
                     r.instance_type or "–", str(r.machines), money(r.total, r.currency), say_all(r.notes))
            chosen = (choice is not None and r.instance_type == choice.offer.instance_type
                      and r.region == choice.offer.region and r.option == ("spot" if spot else "on-demand"))
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c == 6:
                    item.setToolTip(text)
                if chosen:
                    f = item.font()
                    f.setBold(True)
                    item.setFont(f)
                self.table.setItem(i, c, item)
        self.table.setVisible(bool(rows))
        if p is None:  # say what is missing, not both (a CPU job with a runtime was told it needs one)
            self.empty.setText(tr("The comparison needs a maximum runtime: set one under Guards.") if gpu_job
                               else tr("The comparison is for GPU jobs: this job asks for no GPU model."))
        elif not rows:
            self.empty.setText(tr("No offer of {model} to compare.").format(model=p.gpu_model))
        else:
            self.empty.setText(tr("{n}× {model} for {hours} h. Reserved terms are paid in full even when the job "
                                  "is shorter; spot may be interrupted. Compare with buying the hardware under "
                                  "Prices ▸ Plan a job's cost.").format(n=p.gpus, model=p.gpu_model,
                                                                         hours=f"{p.hours:g}"))


class SecretsBox(QGroupBox):
    """One hidden field per secret the job asks for; the values go to the draft (memory only)."""

    def __init__(self, draft: Draft, parent: QWidget | None = None) -> None:
        super().__init__(tr("Secrets the job asks for"), parent)
        self.setObjectName("secrets-box")
        self.draft = draft
        self.form = QFormLayout(self)
        self.note = QLabel(tr("Given to the job's environment only: never saved, shown or logged."),
                           objectName="secrets-note", wordWrap=True)
        self.form.addRow(self.note)
        self.edits: dict[str, QLineEdit] = {}
        self.setVisible(False)

    def show_names(self, names: tuple[str, ...]) -> None:
        """Rebuild the fields when the spec's secrets changed (typing does not rebuild them)."""
        if tuple(self.edits) == names:
            return
        for edit in self.edits.values():
            self.form.removeRow(edit)
        self.edits = {}
        for name in names:
            edit = QLineEdit(objectName=f"secret-{name}")
            edit.setEchoMode(QLineEdit.EchoMode.Password)
            edit.setPlaceholderText(tr("value of {name}").format(name=name))
            edit.textChanged.connect(self._typed)
            self.edits[name] = edit
            self.form.addRow(f"{name}:", edit)
        self.setVisible(bool(names))

    def _typed(self) -> None:
        self.draft.update(secret_env={n: e.text() for n, e in self.edits.items() if e.text()})


class ReviewPage(QWizardPage):
    """The draft in words, the projected cost, the Launch action and the progress panel."""

    def __init__(self, draft: Draft, parent: QWidget | None = None, session: object = None) -> None:
        super().__init__(parent)
        self.draft = draft
        self.setObjectName("launch-review-page")
        self.setTitle(tr("Review and launch"))
        self.setSubTitle(tr("This is what will be created and what it can cost. Nothing is created before "
                            "you press Launch."))
        self.fields: dict[str, QLabel] = {}
        form = self.form = QFormLayout()
        for key, label in (("job", tr("Job:")), ("command", tr("Command:")), ("image", tr("Image:")),
                           ("where", tr("Where:")),
                           ("machine", tr("Machine:")), ("choice", tr("Chosen:")), ("disk", tr("Disk:")),
                           ("pricing", tr("Pricing:")),
                           ("on_finish", tr("When the job ends:")), ("guards", tr("Guards:")),
                           ("storage", tr("Data:")), ("recovery", tr("Recovery:")),
                           ("cost", tr("Projected cost:"))):
            value = QLabel(objectName=f"review-{key}", wordWrap=True)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setTextFormat(Qt.TextFormat.PlainText)
            self.fields[key] = value
            form.addRow(label, value)
        form.setRowVisible(self.fields["choice"], False)
        self.cost = self.fields["cost"]
        self.cost.setObjectName("projected-cost")
        font = QFont(self.cost.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self.cost.setFont(font)
        self.cost_warning = InlineMessage("warning", "cost-warning")
        self.storage_warning = InlineMessage("warning", "storage-warning")
        self.storage_error = InlineMessage("error", "storage-error")
        self.comparison = CostComparisonBox()
        self.secrets = SecretsBox(draft)
        self.watch = WatchOption(draft, session)  # "Keep watching while this computer is off" (issue 33)
        self.secrets_missing = InlineMessage("error", "secrets-missing")
        self.panel = LaunchProgressPanel()
        self.panel.setVisible(False)
        #: the one way a launch starts (the wizard connects it, and its Launch button triggers it)
        self.launch_action = QAction(icon("launch"), tr("&Launch"), self)
        self.launch_action.setObjectName("launch-action")
        self.busy = False  # a launch or its cleanup is in flight
        self.launched = False  # the launch succeeded: the wizard may finish
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.watch)
        layout.addWidget(self.secrets)
        layout.addWidget(self.secrets_missing)
        layout.addWidget(self.cost_warning)
        layout.addWidget(self.storage_warning)
        layout.addWidget(self.storage_error)
        layout.addWidget(self.comparison)
        layout.addWidget(self.panel)
        layout.addStretch(1)
        draft.changed.connect(self._draft_changed)
        self._update_action()

    def initializePage(self) -> None:  # noqa: N802 (Qt naming)
        self.show_draft(self.draft.value)
        self.panel.setVisible(False)

    def _draft_changed(self, value: LaunchDraft, _names: frozenset[str]) -> None:
        if self.wizard() is not None and self.wizard().currentPage() is self:
            self.show_draft(value)
        self._update_action()
        self.completeChanged.emit()

    def show_draft(self, d: LaunchDraft) -> None:
        """Show what launching ``d`` would create, and the cost comparison of its offers."""
        spec = d.launch_spec()
        self.show_summary(spec, d.choice)
        self.show_comparison(spec, list(d.offers), d.choice)
        self.secrets.show_names(spec.secrets)
        if spec.image is not None and (auth := spec.image.registry_auth) is not None and auth.password_secret in \
                self.secrets.edits:  # say what the registry's secret is for
            self.secrets.edits[auth.password_secret].setPlaceholderText(tr("password or token of {user} at {registry}")
                                                                        .format(user=auth.username,
                                                                                registry=spec.image.registry))
        self.watch.show_for(d)
        missing = d.missing_secrets
        self.secrets_missing.show_text(tr("Give a value for {names} to launch.").format(names=", ".join(missing))
                                       if missing else None)

    def show_comparison(self, spec: JobSpec, offers: list[RankedOffer], choice: RankedOffer | None) -> None:
        """The cost planner's table for this job, from the offers the wizard already has (no network)."""
        g = spec.resources.gpu
        self.comparison.show_comparison(job_cost_comparison(spec, offers), choice, spec.resources.spot,
                                        gpu_job=g is not None and bool(g.model))

    def show_summary(self, spec: JobSpec, choice: RankedOffer | None) -> None:
        """What launching ``spec`` on ``choice`` creates, in words, and its projected cost."""
        f = self.fields
        f["job"].setText(spec.name + (" · " + tr("from {file}").format(file=spec.source) if spec.source else ""))
        f["command"].setText(spec.run.strip())
        f["image"].setText(image_text(spec.image))
        self.form.setRowVisible(f["image"], spec.image is not None)  # a job without a container: nothing to say
        here = choice is not None and on_this_computer(choice.offer.provider)
        cluster = choice is not None and not here and is_own_hardware(choice.offer.provider)  # the user's own
        f["disk"].setText(tr("{n} GB").format(n=spec.resources.disk_gb))
        self.form.setRowVisible(f["disk"], not here and not cluster)  # this computer's (a cluster's) disk is not rented
        f["on_finish"].setText(tr(ON_FINISH_HERE) if here else tr(ON_FINISH_CLUSTER) if cluster
                               else tr(ON_FINISH_TEXT[spec.on_finish]))
        f["guards"].setText(guards_text(spec.guards))
        f["recovery"].setText(recovery_text(spec))
        self.show_storage(spec, None)
        if choice is None:
            return
        o = choice.offer
        f["where"].setText((tr("{provider} / {profile}, cluster {region}") if cluster else tr(
            "{provider} / {profile}, region {region}")).format(provider=o.provider, profile=choice.profile, region=o.region))
        gpus = f"{o.gpu_count}× {o.gpu_model or '?'}" if o.gpu_count else tr("no GPU")
        machine = tr("{type}: {gpus}, {cpus} vCPUs, {ram} GB RAM").format(
            type=o.instance_type, gpus=gpus, cpus=o.vcpus, ram=f"{o.memory_gb:g}")
        n = spec.num_nodes
        if n > 1:
            machine = tr("{n} machines, each {machine}; placed close together, {network}").format(
                n=n, machine=machine, network=interconnect(o)) + (
                " · ⚠ " + tr("no fast interconnect") if interconnect_note(o) else "")
        f["machine"].setText(machine)
        matched = describe_match(spec, choice)
        f["choice"].setText(matched or "")
        self.form.setRowVisible(f["choice"], bool(matched))  # only a spec with alternatives has something to say
        term = tr("spot (cheaper, may be interrupted)") if effective_spot(spec, choice) else tr("on-demand")
        paid = o.prices.hourly_detail(effective_spot(spec, choice))
        if n > 1:
            f["pricing"].setText(tr("{term}: {price} per hour per machine, {total} for all {n} · prices: {source}, "
                                    "{date}").format(
                term=term, price=money(choice.price, o.prices.currency, 3), n=n,
                total=money(None if choice.price is None else choice.price * n, o.prices.currency, 3),
                source=say(o.prices.source), date=say(describe_date(paid.as_of))))
        else:
            f["pricing"].setText(tr("{term}: {price} per hour · prices: {source}, {date}").format(
                term=term, price=money(choice.price, o.prices.currency, 3), source=say(o.prices.source),
                date=say(describe_date(paid.as_of))))
        if your_cluster(o):  # the user's own cluster without a rate: not "$0.000 per hour, date unknown"
            f["pricing"].setText(tr("your cluster: its profile sets no hourly rate"))
        self.cost.setText(tr("No charge: your cluster") if your_cluster(o) else cost_text(choice, spec.guards, n))
        self.cost_warning.show_text(tr("No runtime limit is set: go back to Guards to set one.")
                                    if spec.guards.max_runtime_minutes is None else None)

    def show_storage(self, spec: JobSpec, result: object, checking: bool = False) -> None:
        """The mounts in words; ``result`` the storage check's plan (sizes, regions, warnings) or its error."""
        from workbench.core.storage.checks import StoragePlan

        if not spec.storage:
            self.fields["storage"].setText(tr("none"))
            self.storage_warning.show_text(None)
            self.storage_error.show_text(None)
            return
        checked = {m.index: m for m in result.mounts} if isinstance(result, StoragePlan) else {}
        lines = []
        for i, m in enumerate(spec.storage):
            what = tr("copy {source} → {path} before setup") if m.mode.value == "copy" else \
                tr("sync {path} → {source} every {every}")
            line = what.format(source=m.source, path=m.path, every=duration(m.interval_s))
            c = checked.get(i)
            if c is not None and c.upload_from:
                line += " " + tr("(uploaded first to {uri})").format(uri=c.uri)
            if c is not None and c.bytes is not None:
                size = f"{c.bytes / 1e9:,.2f} GB" if c.bytes >= 1e9 else f"{c.bytes / 1e6:,.1f} MB"
                line += " · " + tr("{size} in {n} files").format(size=size, n=c.objects)
            if c is not None and c.region:
                line += " · " + c.region
            lines.append(line)
        if checking:
            lines.append(tr("Checking the buckets…"))
        self.fields["storage"].setText("\n".join(lines))
        self.storage_warning.show_text("\n".join(result.warnings) if isinstance(result, StoragePlan) else None)
        self.storage_error.show_text(getattr(result, "message", None) or (str(result) if isinstance(result, Exception)
                                                                        else None))

    # -- the launch's state, as the wizard reports it -------------------------------
    def set_run_state(self, busy: bool, launched: bool = False) -> None:
        """The wizard says whether a launch (or its cleanup) is in flight and whether it succeeded."""
        self.busy = busy
        self.launched = launched
        self._update_action()
        self.completeChanged.emit()  # QWizard recomputes its buttons from isComplete

    def _update_action(self) -> None:
        self.launch_action.setEnabled(self.draft.value.ready and not self.busy and not self.launched)

    def isComplete(self) -> bool:  # noqa: N802
        # Launch (the Finish button) waits for an offer and every secret; after a launch it finishes
        return not self.busy and (self.launched or self.draft.value.ready)

    def validatePage(self) -> bool:  # noqa: N802
        """Finishing the wizard is allowed only after a successful launch (no side effect here)."""
        return self.launched
