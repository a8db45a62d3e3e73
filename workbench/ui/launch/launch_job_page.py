"""Wizard page 1, the job: open a YAML job spec or fill in a short form.

The form is always the source of what gets launched: opening a spec fills the
form and keeps the spec's other fields (setup, env, workdir, guards, on_finish)
as the base that the form's values replace.  A SkyPilot task or dstack task
file opens too (``importers.load_job_file``): a panel lists how each of its
fields was read, and a field that cannot run yet blocks Next like an error.
GPU choices and ranges the form cannot show (alternatives, a count range, a
vendor) are kept from the file and the GPU fields are locked.  A spec that fails to load shows
the jobspec error (``file:line: field: problem``) in red and blocks Next until
another file is opened or the spec is cleared.  Moving on writes the job to
the wizard's draft (``spec``).  "Quick example" opens the free job on this
computer that the Launch view offers too, so Ctrl+N reaches it.  A form problem
shows once the user has typed (or opened a file), never on a fresh form.  The
disk size is asked on the guards page, once the machine is chosen.  Main thread
only; reading a small local YAML file is the only I/O.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel,
                               QLineEdit, QPlainTextEdit, QPushButton, QSpinBox, QVBoxLayout, QWidget,
                               QWizardPage)

from workbench.core.domain.errors import ConfigError, SpecError
from workbench.core.domain.gpus import GPU_MODELS
from workbench.core.domain.importers import load_job_file
from workbench.core.domain.jobspec import MAX_GPU_COUNT
from workbench.core.domain.jobspec_choices import describe_alternative, describe_gpu
from workbench.core.domain.models import GpuRequest, JobSpec
from workbench.core.lifecycle.launcher import refuse_unsupported
from workbench.ui.common.icons import icon
from workbench.ui.i18n import tr
from workbench.ui.common.inline_messages import InlineMessage
from workbench.ui.launch.image_field import ImageBox
from workbench.ui.launch.import_notes import ImportNotesPanel
from workbench.ui.launch.launch_draft import Draft
from workbench.ui.launch.launch_storage import StorageBox
from workbench.ui.launch.ports_field import PortsField


def quick_example_path() -> str:
    """The few-second local job behind "Quick example" (resources/examples/local-smoke.yaml)."""
    from workbench.core import paths

    return str(paths.resources_dir() / "examples" / "local-smoke.yaml")

# The jobspec's name rule: names become file names, cloud tags and resource-group names.
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
GPU_NONE, GPU_ANY = "", "any"


class JobPage(QWizardPage):
    """Name, command and resources of the job; ``build_spec()`` gives the JobSpec to launch."""

    def __init__(self, draft: Draft, parent: QWidget | None = None, session=None) -> None:
        super().__init__(parent)
        self.draft = draft
        self.setObjectName("launch-job-page")
        self.setTitle(tr("Job"))
        self.setSubTitle(tr("What to run: open a job spec, a SkyPilot task or a dstack task (YAML), or fill in "
                            "the form."))
        self.base: JobSpec | None = None  # the opened spec, whose other fields are kept
        self.load_error: str | None = None
        self.file_dialog: QFileDialog | None = None

        self.spec_path = QLineEdit(objectName="spec-path", readOnly=True)
        self.spec_path.setPlaceholderText(tr("none: the job is described by the form below"))
        self.open_button = QPushButton(icon("open"), tr("&Open job spec…"), objectName="open-spec")
        self.open_button.clicked.connect(self.choose_file)
        self.clear_button = QPushButton(tr("C&lear"), objectName="clear-spec")
        self.clear_button.setToolTip(tr("Forget the opened spec and start from a blank form"))
        self.clear_button.clicked.connect(self.clear_spec)
        self.quick_button = QPushButton(icon("launch"), tr("&Quick example (free, on this computer)"),
                                        objectName="quick-example-page")
        self.quick_button.setToolTip(tr("A few seconds, no cloud account, no bill: see how a launch works."))
        self.quick_button.clicked.connect(lambda: self.load_file(quick_example_path()))
        self.spec_error = InlineMessage("error", "spec-error")
        self.touched = False  # a problem is shown once the user typed or opened a file

        self.name_edit = QLineEdit(objectName="job-name")
        self.name_edit.setPlaceholderText(tr("e.g. train-resnet"))
        self.command_edit = QPlainTextEdit(objectName="job-command")
        self.command_edit.setPlaceholderText(tr("e.g. python3 train.py --epochs 10"))
        self.command_edit.setTabChangesFocus(True)
        self.command_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 4 + 12)
        self.gpu_model = QComboBox(objectName="gpu-model")
        self.gpu_model.addItem(tr("None (CPU only)"), GPU_NONE)
        self.gpu_model.addItem(tr("Any GPU"), GPU_ANY)
        for name in GPU_MODELS:
            self.gpu_model.addItem(name, name)
        self.gpu_count = QSpinBox(objectName="gpu-count", minimum=0, maximum=MAX_GPU_COUNT, value=1)
        self.gpu_memory = QDoubleSpinBox(objectName="gpu-memory", minimum=0, maximum=1024, decimals=0, suffix=" GB")
        self.gpu_memory.setSpecialValueText(tr("any"))
        self.spot = QCheckBox(tr("Use &spot capacity (cheaper, may be interrupted)"), objectName="spot")
        self.ports_edit = PortsField()  # the spec's ports: forwarded here while the job runs
        self.image_box = ImageBox(self)  # the container image setup and run happen in, and its registry login
        self.gpu_from_file = QLabel(objectName="gpu-from-file", wordWrap=True)
        self.gpu_from_file.setVisible(False)
        self.gpu_locked = False  # the opened file's GPU choices are more than the form can show
        self.import_panel = ImportNotesPanel()
        self.error = InlineMessage("error", "job-error")
        self.spec_path.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # Tab goes from Open… to the form
        for w in (self.gpu_model, self.gpu_count, self.gpu_memory):
            w.setMaximumWidth(self.fontMetrics().horizontalAdvance("M") * 16)

        spec_row = QHBoxLayout()
        spec_row.addWidget(self.spec_path, 1)
        spec_row.addWidget(self.open_button)
        spec_row.addWidget(self.clear_button)
        quick_row = QHBoxLayout()
        quick_row.addWidget(self.quick_button)
        quick_row.addStretch(1)
        form = QFormLayout()
        form.addRow(tr("Job spec:"), spec_row)
        form.addRow("", quick_row)
        form.addRow("", self.spec_error)
        form.addRow(tr("N&ame:"), self.name_edit)
        form.addRow(tr("&Command:"), self.command_edit)
        form.addRow(tr("&GPU model:"), self.gpu_model)
        form.addRow(tr("GPU coun&t:"), self.gpu_count)
        form.addRow(tr("&Min. GPU memory:"), self.gpu_memory)
        form.addRow("", self.gpu_from_file)
        form.addRow("", self.spot)
        form.addRow(tr("&Ports:"), self.ports_edit)
        self.image_box.add_rows(form)
        self.storage_box = StorageBox(session)  # storage mounts and recovery: the draft's own fields
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.storage_box)
        layout.addWidget(self.error)
        layout.addWidget(self.import_panel, 1)
        layout.addStretch(1)

        for signal in (self.name_edit.textChanged, self.command_edit.textChanged,
                       self.gpu_model.currentIndexChanged, self.gpu_count.valueChanged, self.ports_edit.textChanged):
            signal.connect(self._edited)
        self.image_box.changed.connect(self._edited)
        for signal in (self.storage_box.recovery_on.toggled, self.storage_box.table.model().rowsInserted,
                       self.storage_box.table.model().rowsRemoved):  # what a container may not have yet
            signal.connect(self._changed)
        self._changed()

    # -- opening a spec --------------------------------------------------------
    def choose_file(self) -> None:
        """Ask for a YAML file (non-blocking dialog); the choice is loaded with ``load_file``."""
        start = str(Path(self.spec_path.text()).parent) if self.spec_path.text() else ""
        dlg = QFileDialog(self, tr("Open job spec"), start,
                          tr("Job specs, SkyPilot and dstack files (*.yaml *.yml);;All files (*)"))
        dlg.setObjectName("open-spec-dialog")
        dlg.setFileMode(QFileDialog.FileMode.ExistingFile)
        dlg.fileSelected.connect(self.load_file)
        self.file_dialog = dlg
        dlg.open()

    def load_file(self, path: str) -> bool:
        """Load ``path`` into the form; on a SpecError show it (with its line) and block Next."""
        self.spec_path.setText(path)
        try:
            result = load_job_file(path)
        except SpecError as exc:
            self.import_panel.show_result(None)
            return self._load_failed(exc.message)
        self.import_panel.show_result(result)  # a refused field is listed there too
        try:
            spec = result.require_spec()
        except SpecError as exc:
            return self._load_failed(exc.message)
        self.load_error = None
        self.spec_error.show_text(None)
        self.base = spec
        self.fill(spec)
        return True

    def _load_failed(self, message: str) -> bool:
        self.base = None
        self.load_error = message
        self.spec_error.show_text(message)
        self._lock_gpu(None)
        self._changed()
        return False

    def clear_spec(self) -> None:
        self.base = None
        self.load_error = None
        self.storage_box.fill((), None)
        self.spec_path.clear()
        self.spec_error.show_text(None)
        self.import_panel.show_result(None)
        self._lock_gpu(None)
        self._changed()

    def fill(self, spec: JobSpec) -> None:
        """Show ``spec``'s name, command and resources in the form."""
        self.name_edit.setText(spec.name)
        self.command_edit.setPlainText(spec.run)
        gpu = spec.resources.gpu
        key = GPU_NONE if gpu is None else (gpu.model or GPU_ANY)
        self.gpu_model.setCurrentIndex(max(0, self.gpu_model.findData(key)))
        self.gpu_count.setValue(gpu.count if gpu else 1)
        self.gpu_memory.setValue((gpu.min_memory_gb or 0) if gpu else 0)
        self.spot.setChecked(spec.resources.spot)
        self.ports_edit.fill(spec.ports)
        self.image_box.fill(spec.image)
        self.storage_box.fill(spec.storage, spec.recovery)
        self._lock_gpu(spec)
        self._changed()

    def _lock_gpu(self, spec: JobSpec | None) -> None:
        """Lock the GPU fields when ``spec`` asks for more than they show (choices, a range, a vendor)."""
        gpu = spec.resources.gpu if spec is not None else None
        ranged = gpu is not None and (gpu.max_count is not None or gpu.max_memory_gb is not None
                                      or gpu.vendor is not None)
        self.gpu_locked = spec is not None and (bool(spec.alternatives) or ranged)
        if self.gpu_locked and spec is not None:
            if spec.alternatives:
                how = tr("the cheapest of") if spec.choose == "cheapest" else tr("the first with an offer of")
                text = tr("GPUs from the file: {how} {choices}").format(
                    how=how, choices="; ".join(describe_alternative(a) for a in spec.alternatives))
            else:
                text = tr("GPUs from the file: {gpu}").format(gpu=describe_gpu(gpu))
            self.gpu_from_file.setText(text)
        self.gpu_from_file.setVisible(self.gpu_locked)

    # -- validation ------------------------------------------------------------
    def problem(self) -> str | None:
        """The first thing that keeps this page from being complete, in words; None when fine."""
        if self.load_error:
            return tr("The job spec has an error (see above): fix the file and open it again, or clear it.")
        name = self.name_edit.text().strip()
        if not name:
            return tr("Give the job a name.")
        if not _NAME_RE.fullmatch(name):
            return tr("The name may use letters, digits, '_', '.' and '-' (up to 63), starting with a "
                      "letter or digit.")
        if not self.command_edit.toPlainText().strip():
            return tr("Give the command that runs the job.")
        if self.gpu_model.currentData() != GPU_NONE and self.gpu_count.value() < 1:
            return tr("A GPU job needs at least 1 GPU (choose 'None' for a CPU-only machine).")
        base_env = tuple(self.base.env) if self.base is not None else ()
        problem = self.ports_edit.problem() or self.image_box.problem(base_env)
        if problem is None and self.image_box.image() is not None:
            try:  # the launcher's own rule: what this version cannot do together with an image
                refuse_unsupported(dataclasses.replace(self.build_spec(), storage=self.storage_box.mounts(),
                                                       recovery=self.storage_box.recovery()))
            except ConfigError as exc:
                return tr("This job cannot be launched yet: {why}.").format(why=exc.message)
        return problem

    def _edited(self) -> None:
        self.touched = True
        self._changed()

    def _changed(self) -> None:
        gpu = self.gpu_model.currentData() != GPU_NONE
        self.gpu_model.setEnabled(not self.gpu_locked)
        self.gpu_count.setEnabled(gpu and not self.gpu_locked)
        self.gpu_memory.setEnabled(gpu and not self.gpu_locked)
        self.error.show_text(self.problem() if self.touched or self.load_error else None)  # not on a fresh form
        self.completeChanged.emit()

    def isComplete(self) -> bool:  # noqa: N802 (Qt naming)
        return self.problem() is None

    def build_spec(self) -> JobSpec:
        """The JobSpec the form describes, on top of the opened spec (if any)."""
        model = self.gpu_model.currentData()
        gpu = None
        if model != GPU_NONE:
            gpu = GpuRequest(model=None if model == GPU_ANY else model, count=self.gpu_count.value(),
                             min_memory_gb=self.gpu_memory.value() or None)
        base = self.base or JobSpec(name="job", run="true")
        if self.gpu_locked:
            gpu = base.resources.gpu  # the file's choices or range, which the form cannot show
        resources = dataclasses.replace(base.resources, gpu=gpu, spot=self.spot.isChecked())
        return self.image_box.apply(dataclasses.replace(base, name=self.name_edit.text().strip(),
                                                        run=self.command_edit.toPlainText(), resources=resources,
                                                        ports=self.ports_edit.ports()))

    def initializePage(self) -> None:  # noqa: N802 (Qt naming)
        self.name_edit.setFocus()

    def validatePage(self) -> bool:  # noqa: N802
        if self.problem() is not None:
            return False
        self.draft.update(spec=self.build_spec(), save_registry_login=self.image_box.save_wanted())
        self.storage_box.write_to(self.draft)
        return True
