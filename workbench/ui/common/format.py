"""Numbers as people read them: money with its currency, durations, sizes (locale-aware)."""

from __future__ import annotations

from typing import Iterable

from workbench.core.domain.models import ContainerImage, InstanceState
from workbench.core.domain.errors import WorkbenchError  # noqa: F401 - named in annotations
from workbench.core.domain.phrase import Phrase
from workbench.ui.i18n import N_, tr

_SYMBOLS = {"USD": "$", "CNY": "¥", "EUR": "€", "GBP": "£", "JPY": "¥"}


def money(amount: float | None, currency: str = "USD", digits: int = 2) -> str:
    """``$12.24`` for USD, ``¥88.10 CNY`` for other currencies (always labelled), ``–`` when unknown."""
    if amount is None:
        return "–"
    sym = _SYMBOLS.get(currency, "")
    text = f"{sym}{amount:,.{digits}f}"
    return text if currency == "USD" else f"{text} {currency}"


def say(words: Phrase | str | None) -> str:
    """The core's words in the UI language: a :class:`Phrase` filled in after translating its template, a
    fixed phrase (marked ``N_`` in the core) translated; anything else (a provider's own words) as it is."""
    if words is None:
        return ""
    if isinstance(words, Phrase):
        values = {k: say(v) if isinstance(v, Phrase) else v for k, v in words.values.items()}  # nested phrases too
        try:
            return tr(words.template).format(**values)
        except (KeyError, IndexError, ValueError):  # a translation that lost a placeholder: English, not a crash
            return str(words)
    return tr(words)


def say_all(parts: Iterable[Phrase | str]) -> str:
    """Several of the core's phrases as one note, in the UI language."""
    return tr("; ").join(s for s in (say(p) for p in parts) if s)


def duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3 h 05 min``, ``2 d 4 h``."""
    s = int(seconds)
    if s < 60:
        return tr("{n} s").format(n=s)
    if s < 3600:
        return tr("{n} min").format(n=s // 60)
    if s < 86400:
        return tr("{h} h {m:02d} min").format(h=s // 3600, m=(s % 3600) // 60)
    return tr("{d} d {h} h").format(d=s // 86400, h=(s % 86400) // 3600)


STATE_LABELS = {
    InstanceState.PENDING: N_("starting"), InstanceState.RUNNING: N_("running"),
    InstanceState.STOPPING: N_("stopping"), InstanceState.STOPPED: N_("stopped (disks bill)"),
    InstanceState.DEALLOCATED: N_("deallocated"), InstanceState.TERMINATING: N_("terminating"),
    InstanceState.TERMINATED: N_("terminated"), InstanceState.UNKNOWN: N_("unknown (may bill)"),
}


def plural(n: int, one: str, many: str) -> str:
    """``one`` (an N_()-marked "1 …" text) when ``n`` is 1, else ``many``; both translated."""
    return tr(one) if n == 1 else tr(many)


LAUNCH_STATUS = {
    "launching": N_("launching"), "running": N_("running"), "finished": N_("finished"), "failed": N_("failed"),
    "terminated": N_("terminated"), "recovered": N_("recovered"), "stopped": N_("stopped"),
}


def launch_status(status: str) -> str:
    """A launch's status ("running", "failed" …) in the UI language; an unknown one as it is."""
    return tr(LAUNCH_STATUS[status]) if status in LAUNCH_STATUS else status


def state_label(state: InstanceState) -> str:
    """The state as the user reads it, in the UI language."""
    return tr(STATE_LABELS[state])


def image_text(image: ContainerImage | None) -> str:
    """A job's container image in words (the wizard's review, Instances): the reference, and who logs in where."""
    if image is None:
        return tr("none: the job runs on the machine itself")
    text = image.name
    if image.registry_auth is not None:
        text += " · " + tr("login as {user} to {registry}").format(user=image.registry_auth.username,
                                                                    registry=image.registry)
    return text


def error_words(error: "WorkbenchError | str") -> str:
    """An error of the core in the words the app shows: a missing keyring in plain words (its message names
    the keyring library's backend class, for the CLI and the log), anything else as its message."""
    from workbench.core.domain.errors import NoKeyringError

    if isinstance(error, NoKeyringError):
        return tr("no keyring is running on this computer, so the account's credentials cannot be read "
                  "(see Accounts)")
    return getattr(error, "message", None) or str(error)


def unchecked_text(profile: str, reason: "WorkbenchError | str", may_bill: bool) -> str:
    """A profile the app could not list: "cannot check P: why", and a warning only when it launched there."""
    text = tr("cannot check {profile}: {reason}").format(profile=profile, reason=error_words(reason))
    if may_bill:
        text += " — " + tr("something this app launched there may still be billing")
    return text
