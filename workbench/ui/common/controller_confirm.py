"""The controller in words shared by Accounts and the wizard: its price all-in (and its parts), and the one-time
question before an account's controller is created (issue 33: asked once per account, naming the machine, its
price all-in, the cloud identity it creates and where its records live).

Main thread only (the plan it shows was made on a worker: ``ui.runtime.controller_hook.plan_for``).
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtWidgets import QMessageBox, QWidget

from workbench.ui.common.format import money
from workbench.ui.i18n import N_, tr

PART_WORDS = {"machine": N_("machine"), "disk": N_("disk"), "address": N_("public address")}


def price_text(cost: Any) -> str:
    """``$0.011/h all-in``."""
    return tr("{price}/h all-in").format(price=money(cost.total_per_h, cost.currency, 3))


def price_parts(cost: Any) -> str:
    """One line per part of the price (machine, disk, address) with its source and date: a tooltip."""
    lines = [tr("{type} in {region}, {price}/h all-in:").format(
        type=cost.instance_type, region=cost.region, price=money(cost.total_per_h, cost.currency, 4))]
    for p in cost.parts():
        lines.append(tr("• {part} ({what}): {price}/h — {source}, {date}").format(
            part=tr(PART_WORDS[p.part]) if p.part in PART_WORDS else p.part, what=p.what, price=money(p.per_h, cost.currency, 4),
            source=p.source, date=p.as_of))
    return "\n".join(lines)


def identity_text(identity: Any) -> str:
    """The cloud identity the controller runs as: ready, or what creating it makes (or needs an administrator)."""
    if identity is None:
        return tr("Cloud identity: none needed on this cloud")
    if identity.ready:
        return tr("Cloud identity: {name} (exists)").format(name=identity.name)
    text = tr("Cloud identity it creates: {name}").format(name=identity.name)
    if identity.missing:
        text += "\n" + tr("(what it needs: {missing})").format(missing="; ".join(identity.missing))
    return text


def confirm_text(planned: Any) -> str:
    """The question's details: machine, price all-in with its parts, identity, records."""
    cost = planned.cost
    lines = [tr("Machine: {type} in {region}").format(type=cost.instance_type, region=cost.region),
             tr("Price: {price} (machine {machine}, {gb} GB disk {disk}, public address {address})").format(
                 price=price_text(cost), machine=money(cost.machine_per_h, cost.currency, 4), gb=cost.disk_gb,
                 disk=money(cost.disk_per_h, cost.currency, 4), address=money(cost.address_per_h, cost.currency, 4)),
             identity_text(planned.identity),
             tr("Its records live in: {where}").format(where=planned.board),
             "",
             tr("It bills while it runs, and ends itself after 30 minutes with nothing to watch. You are asked "
                "this once for this account.")]
    return "\n".join(lines)


def ask_to_create(parent: QWidget | None, planned: Any, on_yes: Callable[[], None],
                  on_no: Callable[[], None] | None = None) -> QMessageBox:
    """Open the one-time question (window-modal, not blocking); ``on_yes`` when the user creates it."""
    box = QMessageBox(QMessageBox.Icon.Question, tr("Create a controller"),
                      tr("Create the controller of {profile}? A small machine in this cloud account watches your "
                         "launches while this computer is off: it relaunches interrupted spot jobs and ends what "
                         "should end.").format(profile=planned.profile.name),
                      QMessageBox.StandardButton.Cancel, parent)
    box.setObjectName("controller-confirm")
    box.setInformativeText(confirm_text(planned))
    yes = box.addButton(tr("&Create controller"), QMessageBox.ButtonRole.AcceptRole)
    yes.setObjectName("controller-confirm-yes")
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    yes.clicked.connect(on_yes)
    if on_no is not None:
        box.button(QMessageBox.StandardButton.Cancel).clicked.connect(on_no)
    box.open()
    return box
