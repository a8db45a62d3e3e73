"""The job page's "Ports" field: the spec's ``ports:`` as one line, ``8888:jupyter, 6006:tensorboard, 8000@all``.

Each item is ``PORT[:NAME][@all]`` (NAME one of jupyter, tensorboard, vscode, http or a short label; ``@all``
forwards the port of every node, else the head's).  Main thread only.
"""

from __future__ import annotations

import re

from PySide6.QtWidgets import QLineEdit, QWidget

from workbench.core.domain.models import Port
from workbench.ui.i18n import tr

_ITEM = re.compile(r"(\d{1,5})(?::([a-z0-9][a-z0-9_.-]{0,31}))?(?:@(head|all))?")


def ports_text(ports: tuple[Port, ...]) -> str:
    """``ports`` as the field shows them."""
    return ", ".join(f"{p.port}{':' + p.name if p.name else ''}{'@all' if p.node == 'all' else ''}" for p in ports)


def parse_ports(text: str) -> tuple[Port, ...]:
    """The ports of the field's text; ValueError with the user's words for the first bad item."""
    out: list[Port] = []
    for item in (t.strip() for t in re.split(r"[,\s]+", text.strip().lower()) if t.strip()):
        m = _ITEM.fullmatch(item)
        if m is None or not 1 <= int(m.group(1)) <= 65535:
            raise ValueError(tr("Ports: '{item}' is not PORT[:NAME][@all], e.g. 8888:jupyter").format(item=item))
        if any(p.port == int(m.group(1)) for p in out):
            raise ValueError(tr("Ports: {port} is listed twice").format(port=m.group(1)))
        out.append(Port(int(m.group(1)), m.group(2), m.group(3) or "head"))
    return tuple(out)


class PortsField(QLineEdit):
    """One line of ports; ``problem()`` says what is wrong, ``ports()`` gives them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("job-ports")
        self.setPlaceholderText(tr("none, or e.g. 8888:jupyter, 6006:tensorboard"))
        self.setToolTip(tr("Ports of the job forwarded to this computer over SSH (127.0.0.1 only) while it "
                           "runs: Instances ▸ Open port…. PORT[:NAME][@all]; names jupyter, tensorboard, "
                           "vscode and http open in the browser; @all forwards every node's port."))

    def problem(self) -> str | None:
        try:
            parse_ports(self.text())
        except ValueError as exc:
            return str(exc)
        return None

    def ports(self) -> tuple[Port, ...]:
        return parse_ports(self.text())

    def fill(self, ports: tuple[Port, ...]) -> None:
        self.setText(ports_text(ports))
