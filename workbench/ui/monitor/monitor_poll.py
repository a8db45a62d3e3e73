"""One telemetry round of one instance, on a worker thread (the Monitor's poll; see monitor_view)."""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field

import numpy as np

from workbench.core.domain.errors import WorkbenchError
from workbench.core.domain.models import Instance, InstanceState
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.contract import SupportsTelemetry
from workbench.core.remote.kinds import is_remote
from workbench.core.telemetry.hub import TelemetryHub
from workbench.core.telemetry.series import COARSE_BUCKET_S, COARSE_CAPACITY, SampleBatch, SeriesKey, SpendCurves, \
    group_samples, spend_curves
from workbench.ui.i18n import tr

InstanceKey = tuple[str, str, str]  # (provider, profile, instance_id)


def instance_key(inst: Instance) -> InstanceKey:
    return (inst.provider, inst.profile, inst.instance_id)


@dataclass
class PollResult:
    """What one poll found (built on a worker; plain data)."""

    key: InstanceKey
    state: InstanceState
    history: dict[SeriesKey, SampleBatch] = field(default_factory=dict)
    live: dict[SeriesKey, SampleBatch] = field(default_factory=dict)
    telemetry: bool | None = None  # None: not asked (instance not running)
    error: WorkbenchError | None = None
    spend: SpendCurves | None = None


def poll_instance(accounts: Accounts, inst: Instance, load_history: bool, hub: TelemetryHub | None = None,
                  since: float = -math.inf) -> PollResult:
    """One telemetry round for ``inst`` (worker thread; may block on the provider).

    A cloud machine with an address (and a batch job on a cluster: its provider's readings) reads the ``hub`` (readings newer
    than ``since``; its booting / driver / lost-GPU states come back as ``error``),
    others ask their provider (``SupportsTelemetry``).  A WorkbenchError from the
    provider is returned in the result, so the spend curves still update; anything
    else propagates to the task's fail().
    """
    store = accounts.store
    now = time.time()
    res = PollResult(key=instance_key(inst), state=inst.state)
    if load_history:
        stored = store.samples(inst.instance_id, since=now - COARSE_BUCKET_S * COARSE_CAPACITY)
        res.history = group_samples(dataclasses.replace(s, util_percent=math.nan) if s.util_percent < 0 else s
                                    for s in stored)  # NOT_REPORTED (MIG slices, [N/A]) is a gap, not -1 %
    if hub is not None and inst.state.active and is_remote(inst) and inst.host:
        res.telemetry = True
        res.live = {key: SampleBatch(rows[:, 0], rows[:, 1].astype(np.float32), rows[:, 2].astype(np.float32),
                                     float(rows[-1, 3]))  # arrays straight from the hub's ring
                    for key, rows in hub.since_rows(inst.instance_id, since).items()}
        state, message, problems = hub.status(inst.instance_id)
        notes = [p.message for p in problems]
        if state in ("booting", "driver", "reconnecting", "error") and message:
            notes.insert(0, {"booting": tr("still booting: {m}"), "driver": tr("GPU driver not ready: {m}"),
                             "reconnecting": tr("reconnecting: {m}"), "error": "{m}"}[state].format(m=message))
        res.error = WorkbenchError("; ".join(notes)) if notes else None
    elif inst.state.active:
        try:
            prov = accounts.provider(accounts.profile(inst.profile))
            res.telemetry = isinstance(prov, SupportsTelemetry)
            if res.telemetry:
                samples = prov.samples(inst)
                store.add_samples(samples)
                res.live = group_samples(samples)
        except WorkbenchError as exc:
            res.error = exc
    res.spend = spend_curves(store.ledger(inst.provider, inst.profile, inst.instance_id), now)
    return res


