"""The launch wizard's draft: one value that holds what the user has decided so far.

Every page of the wizard shares one :class:`Draft` (a QObject holding a
frozen :class:`LaunchDraft` value).  A page never reads or writes the wizard's
or another page's attributes; it

* reads ``draft.value`` when it is shown (``initializePage``) or when
  ``draft.changed`` says a field it shows has changed, and
* writes only its own fields, with ``draft.update(field=value, ...)``, when
  the user moves on (``validatePage``).  ``update`` is the only way the
  draft changes: it replaces the value and emits ``changed(value, names)``
  with the names of the fields whose values changed (nothing when none did).

The fields, each with exactly one writer:

==================== =========== ==================================================
field                written by  read by
==================== =========== ==================================================
``spec``             JobPage     OfferPage (the query), GuardsPage (its prefill),
                                 ReviewPage
``offers``           OfferPage   ReviewPage (the cost comparison, no network)
``choice``           OfferPage   ReviewPage, the launch
``alternatives``     OfferPage   the launch (how many other offers could be tried)
``guards``           GuardsPage  ReviewPage, the launch (None: the spec's own)
``nodes``            OfferPage   ReviewPage, the launch (None: the spec's num_nodes)
``disk_gb``          GuardsPage  ReviewPage, the launch (None: the spec's; a cloud
                                 machine's disk, not asked for a job on this computer)
``secret_env``       ReviewPage  the launch (values of ``spec.secrets``; memory only)
``storage``          JobPage     ReviewPage (its check), the launch (None: the spec's own
                     (StorageBox) mounts; local folders are uploaded at launch)
``recovery``         JobPage     ReviewPage, the launch (UNSET: the spec's own policy)
                     (StorageBox)
``keep_watching``    ReviewPage  the wizard: hand the launch to the account's controller once
                     (WatchOption) its job started (issue 33)
==================== =========== ==================================================

:meth:`LaunchDraft.launch_spec` is the job that will be launched: ``spec``
with every page's own part folded in (the guards, the number of machines, the disk size, the storage
mounts, the recovery policy).  The chosen offer decides what fits: :attr:`LaunchDraft.on_this_computer` and
:attr:`LaunchDraft.has_gpu` tell the pages which questions to ask (no disk size and "end the job"
on this computer, no idle-GPU guard without a GPU).  The launch
(:class:`~workbench.ui.launch.launch_run.LaunchRun`) is given the whole draft
value when the review page's Launch action is triggered, so a field that the
launch needs reaches it without new plumbing.

To add something to the wizard (machines, storage, a form): give
:class:`LaunchDraft` a field with a default, write it from the page that edits
it (``draft.update(...)`` in its ``validatePage``), fold it into
:meth:`LaunchDraft.launch_spec` when it is part of the job, and show it in
``ReviewPage.show_draft``.  A page that edits part of the job keeps that part
in its own field rather than rewriting ``spec``, so a user who goes back to
the job page and on again does not lose it.

Main thread only (the value itself is plain Python and can be read anywhere).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

from PySide6.QtCore import QObject, Signal

from workbench.core.domain.models import Guards, JobSpec, Recovery, StorageMount
from workbench.core.money.billing_status import THIS_COMPUTER
from workbench.core.offers.query import RankedOffer


#: the ``recovery`` field before the job page set it: the spec's own policy applies
UNSET = "unset"


def _blank_spec() -> JobSpec:
    return JobSpec(name="job", run="true")  # replaced by the job page before any other page reads it


@dataclass(frozen=True)
class LaunchDraft:
    """What the wizard's pages have decided (see the module docstring for who writes what)."""

    #: the job as the job page describes it (an opened spec with the form's values on top)
    spec: JobSpec = field(default_factory=_blank_spec)
    #: every offer the offer page listed, cheapest first (the review page compares them)
    offers: tuple[RankedOffer, ...] = ()
    #: the offer to launch on; None until one is chosen
    choice: RankedOffer | None = None
    #: how many other usable offers there were (the launcher's log and hint)
    alternatives: int = 0
    #: the limits set on the guards page; None until that page was passed (then the spec's own apply)
    guards: Guards | None = None
    #: how many machines of the chosen offer (the offer page's "Machines"); None: the spec's num_nodes
    nodes: int | None = None
    #: the cloud machine's disk size set on the guards page; None: the spec's (and on this computer)
    disk_gb: int | None = None
    #: values typed for the spec's secrets: handed to the launch, never stored, never shown or logged
    secret_env: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: the job page's "Save for next time": the launch saves the registry password typed for the image's login
    #: in the keyring (the one exception to "never stored": the user asked for it)
    save_registry_login: bool = False
    #: the storage mounts set on the job page; None: the spec's own
    storage: tuple[StorageMount, ...] | None = None
    #: the recovery policy set on the job page (None: off); UNSET: the spec's own
    recovery: Recovery | None | str = UNSET
    #: hand the launch to the account's controller once its job started ("Keep watching while this computer is off")
    keep_watching: bool = False

    def launch_spec(self) -> JobSpec:
        """The job to launch: ``spec`` with the pages' own parts (guards, machines, disk size, storage, recovery)
        folded in."""
        spec = self.spec
        if self.guards is not None and self.guards != spec.guards:
            spec = dataclasses.replace(spec, guards=self.guards)
        if self.nodes is not None and self.nodes != spec.num_nodes:
            spec = dataclasses.replace(spec, num_nodes=self.nodes)
        if self.disk_gb is not None and self.disk_gb != spec.resources.disk_gb and not self.on_this_computer:
            spec = dataclasses.replace(spec, resources=dataclasses.replace(spec.resources, disk_gb=self.disk_gb))
        if self.storage is not None and self.storage != spec.storage:
            spec = dataclasses.replace(spec, storage=self.storage)
        if self.recovery != UNSET and self.recovery != spec.recovery:
            spec = dataclasses.replace(spec, recovery=self.recovery)
        return spec

    @property
    def on_this_computer(self) -> bool:
        """The chosen offer runs the job here (Local): no machine to size, no bill to stop."""
        return self.choice is not None and self.choice.offer.provider == THIS_COMPUTER

    @property
    def has_gpu(self) -> bool:
        """The job gets GPUs: the chosen offer has some (before a choice: the spec asks for some)."""
        if self.choice is not None:
            return self.choice.offer.gpu_count > 0
        return self.spec.resources.gpu is not None

    @property
    def missing_secrets(self) -> tuple[str, ...]:
        """The spec's secrets that have no value yet."""
        return tuple(n for n in self.spec.secrets if not self.secret_env.get(n))

    @property
    def ready(self) -> bool:
        """True when there is enough to launch (an offer is chosen, every secret has a value)."""
        return self.choice is not None and not self.missing_secrets


class Draft(QObject):
    """Holds the wizard's one :class:`LaunchDraft` and announces its changes."""

    #: (LaunchDraft, frozenset of the names of the fields that changed)
    changed = Signal(object, object)

    def __init__(self, value: LaunchDraft | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._value = value or LaunchDraft()

    @property
    def value(self) -> LaunchDraft:
        return self._value

    def update(self, **changes: Any) -> LaunchDraft:
        """Replace the named fields (unknown names raise TypeError); emit ``changed`` if any value changed."""
        new = dataclasses.replace(self._value, **changes)
        names = frozenset(n for n in changes if getattr(new, n) != getattr(self._value, n))
        self._value = new
        if names:
            self.changed.emit(new, names)
        return new
