"""The toolbar's burn badge (and the tray's tooltip): what bills now, in money.

Red while money bills, amber when a profile that may bill cannot be checked, green otherwise; a free
job on this computer is "running here", not billing.  Main thread only (plain text and a colour).
"""

from __future__ import annotations

from workbench.core.money.spend import burn_rate
from workbench.ui.common.format import money
from workbench.ui.i18n import tr
from workbench.ui.runtime.session import Snapshot


def badge_text(snap: Snapshot) -> tuple[str, str]:
    """The burn badge's text and colour: red while money is billing, amber when a profile that may
    bill cannot be checked, else green; a free job on this computer is "running here", not billing."""
    paying = snap.paying
    if paying:
        text = tr("{count} billing · {rate}/h · {today} today").format(
            count=len(paying), rate=money(burn_rate(paying)), today=money(snap.spend_today))
    else:
        text = tr("Nothing billing · {today} today").format(today=money(snap.spend_today))
    here = [i for i in snap.running_here if i not in paying]
    if here:
        text += " · " + tr("{count} running here").format(count=len(here))
    if snap.may_bill:
        text += " · " + tr("cannot check {count}").format(count=len(snap.may_bill))
    return text, ("#c62828" if paying else "#ef6c00" if snap.may_bill else "#2e7d32")
