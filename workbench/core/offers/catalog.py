"""Offers from the price catalog for clouds that no account answered for: compared, never launched.

The catalog is :mod:`workbench.core.providers.price_snapshot` (the bundled snapshots plus the user's
refreshed copies): the same rows a cloud plugin prices its offers from when its live price calls fail.
Offers from it carry their price source and date and are marked not available, with why ("add an
account to launch", the provider's missing SDK, an account that did not answer).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Iterable

from workbench.core.domain.models import Offer
from workbench.core.domain.phrase import N_
from workbench.core.providers import price_snapshot

if TYPE_CHECKING:
    from workbench.core.providers.accounts import Accounts

NEEDS_ACCOUNT_NOTE = N_("add an account to launch")


def _catalog_note(provider: str, accounts: "Accounts", asked: set[str]) -> str:
    entry = accounts.entries.get(provider)
    if entry is not None and not entry.available:
        return f"{entry.display_name} is unavailable: " + (entry.fix or entry.reason or "see `workbench providers`")
    if provider in asked:
        return "your account did not answer: catalog price; " + NEEDS_ACCOUNT_NOTE + " that works"
    return NEEDS_ACCOUNT_NOTE


def catalog_offers(accounts: "Accounts", exclude: Iterable[str], asked: Iterable[str] = (),
                   provider: str | None = None) -> list[Offer]:
    """Catalog offers of every cloud not in ``exclude``, marked not launchable with the reason."""
    skip, asked_set = set(exclude), set(asked)
    out = []
    for offer in price_snapshot.offers(provider):
        if offer.provider in skip:
            continue
        note = _catalog_note(offer.provider, accounts, asked_set)
        out.append(dataclasses.replace(offer, available=False, availability_note=note,
                                       extra={**offer.extra, "needs_account": True}))
    return out
