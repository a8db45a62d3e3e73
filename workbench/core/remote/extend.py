"""Extend a running launch: raise its max runtime everywhere it is enforced.

A launch's max runtime is enforced in three places, and an extension must reach all of them, or the
one left behind ends the run at the old time:

1. the app-side guard (:class:`workbench.core.lifecycle.guards.GuardEngine`), which reads
   ``spec["guards"]["max_runtime_minutes"]`` of the stored launch;
2. the instance-side guard on every machine of the launch (``resources/guard/workbench_guard.py``),
   which reads ``max_runtime_s`` and ``not_after`` from its config file
   (:data:`workbench.core.providers.bootscript.CONFIG_PATH`); it is told over the launch's SSH;
3. a cloud-side deadline where the cloud has one (Alibaba's AutoReleaseTime, Azure's auto-shutdown
   schedule): the provider's :class:`~workbench.core.providers.contract.SupportsExtend`.

Order: the cloud, then the machines, then the store.  Each of the first two only moves a deadline
later, which is harmless if a later step fails; the store (the app's own deadline) changes last, so a
failure leaves the app at the old max runtime and the error says so (running ``extend`` again is safe:
the values written are absolute, not increments).  Local launches have no instance-side guard and
no cloud deadline: the app-side guard is the only one.

Blocks on the network: call it from a worker thread (GUI) or the CLI.  It lives in ``core.remote`` (which
builds on ``core.lifecycle``) because it talks to the machines over SSH.
"""

from __future__ import annotations

import json
import math
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from workbench.core.domain.errors import ConfigError, NotFoundError, SpecError, WorkbenchError
from workbench.core.domain.models import Guards, Instance
from workbench.core.domain.yaml_reader import DURATION_FORMS, MAX_MINUTES, parse_seconds
from workbench.core.providers import bootscript
from workbench.core.providers.contract import SupportsExtend

#: the clouds whose boot scripts install the instance-side guard
GUARDED_CLOUDS = frozenset(bootscript.CLOUDS)

#: run on the machine (Python 3.6+, standard library): rewrite the guard's limits, atomically.
#: argv: config path, new max runtime in seconds, the extension in seconds (moves ``not_after`` when the
#: config has no max runtime to compare with).  Prints one JSON line.
_GUARD_EDIT = r"""
import json, os, sys
path, new_s, delta = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
with open(path) as fh:
    cfg = json.load(fh)
old = cfg.get("max_runtime_s")
if old is not None:
    delta = new_s - float(old)
    cfg["max_runtime_s"] = new_s
if cfg.get("not_after") is not None:
    cfg["not_after"] = float(cfg["not_after"]) + delta
tmp = path + ".extend.tmp"
with open(tmp, "w") as fh:
    json.dump(cfg, fh, indent=1, sort_keys=True)
    fh.write("\n")
os.chmod(tmp, 0o644)
os.rename(tmp, path)
fired = False
try:
    with open(cfg.get("state_path") or "") as fh:
        fired = bool(json.load(fh).get("fired"))
except (OSError, ValueError):
    pass
print(json.dumps({"max_runtime_s": cfg.get("max_runtime_s"), "not_after": cfg.get("not_after"), "fired": fired}))
"""


@dataclass(frozen=True)
class ExtendResult:
    """What an extension changed (``to_json`` is the CLI's ``--json`` shape, plus details)."""

    launch_id: str
    max_runtime_minutes: int
    ends_at: float
    projected_cost: float | None
    currency: str
    cloud_release_moved: bool
    machines_told: list[str] = field(default_factory=list)
    previous_minutes: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"launch_id": self.launch_id, "max_runtime_minutes": self.max_runtime_minutes,
                "ends_at": self.ends_at, "projected_cost": self.projected_cost, "currency": self.currency,
                "cloud_release_moved": self.cloud_release_moved, "machines_told": list(self.machines_told),
                "previous_max_runtime_minutes": self.previous_minutes}

    def summary(self) -> str:
        end = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.ends_at))
        cost = ("unknown" if self.projected_cost is None
                else f"{self.projected_cost:,.2f} {self.currency}")
        return (f"{self.launch_id} now ends at {end} (max runtime {self.max_runtime_minutes} min, was "
                f"{self.previous_minutes}); projected cost if it runs to the end: {cost}")


def parse_extension(text: str) -> int:
    """'30m', '2h', '90' (minutes), '1h30m' → whole minutes > 0; SpecError otherwise."""
    secs = parse_seconds(str(text))
    if secs is None:
        raise SpecError(f"--by must be {DURATION_FORMS}, got {text!r}", hint="e.g. --by 30m or --by 2h")
    if secs <= 0 or secs % 60:
        raise SpecError(f"--by must be a whole number of minutes above 0, got {text!r}", hint="e.g. --by 30m")
    if secs > MAX_MINUTES * 60:
        raise SpecError(f"--by must be at most {MAX_MINUTES // (24 * 60)} days, got {text!r}")
    return secs // 60


def current_minutes(spec: dict | None) -> int | None:
    """The launch's max runtime in minutes as the app-side guard reads it (None: switched off)."""
    g = (spec or {}).get("guards") or {}
    if not g:
        return Guards().max_runtime_minutes
    value = g.get("max_runtime_minutes", Guards().max_runtime_minutes)
    return None if value is None else int(value)


def tell_machine(inst: Instance, data_dir: Path, max_runtime_s: float, delta_s: float,
                 config_path: str = bootscript.CONFIG_PATH, timeout: float = 30.0) -> dict[str, Any]:
    """Rewrite the instance-side guard's limits on ``inst`` over its SSH; the guard's answer (a dict).

    Raises a WorkbenchError when the machine cannot be reached or refuses (e.g. no passwordless sudo).
    """
    from workbench.core.remote.connection import Target, connect

    args = " ".join(shlex.quote(str(a)) for a in (config_path, max_runtime_s, delta_s))
    q = shlex.quote(config_path)
    cmd = (f'if [ -w {q} ] && [ -w "$(dirname {q})" ]; then python3 - {args}; '
           f"else sudo -n python3 - {args}; fi")
    with connect(Target.for_instance(inst, data_dir)) as conn:
        res = conn.run(cmd, timeout=timeout, stdin=_GUARD_EDIT.encode("utf-8"))
    lines = [line for line in res.out.splitlines() if line.strip()]
    if res.rc != 0 or not lines:
        detail = (res.err or res.out).strip().splitlines()
        raise WorkbenchError(f"the guard on {inst.name or inst.instance_id} could not be updated (exit {res.rc})"
                             + (f": {detail[-1]}" if detail else ""),
                             hint="the machine keeps its old max runtime; try again, or end it with "
                                  "`workbench down`")
    try:
        return json.loads(lines[-1])
    except ValueError:
        raise WorkbenchError(f"the guard on {inst.name or inst.instance_id} gave no readable answer: "
                             f"{lines[-1][:200]}") from None


def extend_launch(accounts: Any, launch_id: str, minutes: int, *, clock: Callable[[], float] = time.time,
                  config_path: str = bootscript.CONFIG_PATH,
                  guarded: Callable[[Instance], bool] | None = None) -> ExtendResult:
    """Raise the max runtime of a running launch by ``minutes`` (see the module docstring).

    ``guarded(inst)`` says whether ``inst`` runs an instance-side guard to tell (default: the clouds
    whose boot scripts install it).  Refuses (SpecError / ConfigError / NotFoundError) when the launch
    is unknown, not running, has no max runtime, or the extension is not a positive whole number.
    """
    from workbench.core.money.spend import SpendBook

    store = accounts.store
    if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes <= 0:
        raise SpecError(f"an extension must be a whole number of minutes above 0, got {minutes!r}")
    rec = store.get_launch(launch_id)
    insts = [i for i in store.list_instances(launch_id) if i.state.active]
    if not insts:
        raise ConfigError(f"{launch_id} is not running: only a running launch can be extended",
                          hint="see its state with `workbench status`; start a new run with `workbench launch`")
    old = current_minutes(rec.spec)
    if old is None:
        raise ConfigError(f"{launch_id} has no max runtime, so there is nothing to extend",
                          hint="its other guards (idle GPU, budget) still apply")
    new = old + minutes
    if new > MAX_MINUTES:
        raise SpecError(f"a max runtime of {new} min is over the limit of {MAX_MINUTES // (24 * 60)} days")
    now = clock()
    ends_at = rec.created_at + new * 60.0
    if ends_at <= now:
        need = int(math.ceil((now - rec.created_at) / 60.0)) - old + 1
        raise SpecError(f"{launch_id} would still be past its end after {minutes} more minutes",
                        hint=f"extend it by at least {need} minutes")

    # 1. the cloud's own deadline
    moved = False
    by_profile: dict[str, list[Instance]] = {}
    for inst in insts:
        by_profile.setdefault(inst.profile, []).append(inst)
    for name, group in by_profile.items():
        try:
            prov = accounts.provider(accounts.profile(name))
        except NotFoundError:
            continue
        if isinstance(prov, SupportsExtend):
            moved = prov.extend(group, ends_at) is not False or moved

    # 2. the guard on every machine
    is_guarded = guarded or (lambda i: i.provider in GUARDED_CLOUDS)
    told: list[str] = []
    data_dir = Path(store.path).parent
    for inst in insts:
        if not is_guarded(inst):
            continue
        answer = tell_machine(inst, data_dir, new * 60.0, minutes * 60.0, config_path=config_path)
        if answer.get("fired"):
            raise ConfigError(f"the guard on {inst.name or inst.instance_id} had already decided to end it",
                              hint="it is being shut down; start a new run with `workbench launch`")
        told.append(inst.instance_id)

    # 3. the app's own deadline, and the projection that follows from it
    spec = json.loads(json.dumps(rec.spec or {}))
    spec.setdefault("guards", {})["max_runtime_minutes"] = new
    store.update_launch(launch_id, spec=spec)
    projected = SpendBook.load(store).projection(launch_id, now)
    if projected is not None:
        store.update_launch(launch_id, projected_cost=projected)
    currency = insts[0].currency or rec.currency
    return ExtendResult(launch_id, new, ends_at, projected, currency, moved, told, old)
