"""Handing a launch to the controller, and bringing what either side did into the other's store.

The app writes ``launches/<root id>.json`` on the board: the first attempt's launch record (its spec: the
recovery policy, the max runtime counted from the first start, the budget), every attempt so far with its
record, the budget the user set, the app's public SSH key (the controller adds it to the machines it starts,
so the app reads their logs as today) and, when the spec's workdir is a folder of this computer, the folder
as ``launches/<root id>.tar.gz`` (a relaunch uploads it again).  The controller takes it in
(:func:`take_in`) into its own store; from then on both sides run the same recovery with the board's claims
(:mod:`.claims`), and each imports the attempts the other made (:func:`import_outcomes`).

Refused: a spec with ``secrets`` (their values live only in the memory of the app that launched it, never on
the board or a machine).  Said plainly: the controller relaunches within its own account only
(:func:`limits`).

Threading: blocks on the board's bucket; call from a worker.
"""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import tarfile
import time
from pathlib import Path
from typing import Any

from workbench.core import paths
from workbench.core.controller.board import Board
from workbench.core.domain.errors import ConfigError
from workbench.core.domain.jobspec import spec_from_dict
from workbench.core.money import budgets
from workbench.core.store.attempts import AttemptRecord
from workbench.core.store.database import LaunchRecord, Store
from workbench.core.store.launches import launch_from_json, launch_to_json

log = logging.getLogger("workbench.controller")

HANDED = "controller:handed"  # store setting: {root id: profile name} of launches a controller watches
MAX_WORKDIR_BYTES = 200 * 1024 * 1024


def handed(store: Store) -> dict[str, str]:
    try:
        data = json.loads(store.get_setting(HANDED) or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _set_handed(store: Store, value: dict[str, str]) -> None:
    store.set_setting(HANDED, json.dumps(value, sort_keys=True) if value else None)


def root_of(store: Store, launch_id: str) -> str:
    mine = store.attempt_of(launch_id)
    return mine.root_id if mine else launch_id


def limits(root: LaunchRecord) -> list[str]:
    """What the controller cannot do for this launch, in plain words (empty: nothing)."""
    spec = root.spec or {}
    notes = []
    others = [p for p in spec.get("providers") or [] if p != root.provider]
    if others:
        notes.append(f"the spec also allows {', '.join(others)}: the controller relaunches only in the account of "
                     f"profile {root.profile!r} ({root.provider}); the app relaunches on the others while it runs")
    return notes


def hand_over(store: Store, board: Board, launch_id: str, app_public_key: str = "", now: float | None = None
              ) -> dict[str, Any]:
    """Put the launch (any attempt's id) on the board for the controller; returns the record written."""
    root_id = root_of(store, launch_id)
    root = store.get_launch(root_id)
    spec = root.spec or {}
    if spec.get("secrets"):
        raise ConfigError(f"{root.name} asks for secrets at launch ({', '.join(spec['secrets'])}): their values live "
                          "only in this app's memory, so the controller could not relaunch it",
                          hint="keep the app (or `workbench watch`) running for this launch, or put the values in "
                               "the storage the job reads instead of launch secrets")
    attempts = store.attempts(root_id)
    records = {a.launch_id: store.find_launch(a.launch_id) for a in attempts}
    budget = budgets.launch_budget(store, root)
    record = {
        "root_id": root_id, "profile": root.profile, "handed_at": now or time.time(),
        "launch": launch_to_json(root),
        "attempts": [a.to_json() for a in attempts],
        "records": {k: launch_to_json(v) for k, v in records.items() if v is not None},
        "budget": None if budget is None else {"amount": budget.amount, "currency": budget.currency,
                                               "enforce": budget.enforce},
        "app_public_key": app_public_key.strip(),
        "workdir": None, "limits": limits(root),
    }
    workdir = spec.get("workdir")
    if workdir and Path(workdir).is_dir():
        board.put_bytes(f"launches/{root_id}.tar.gz", _pack(Path(workdir)))
        record["workdir"] = f"launches/{root_id}.tar.gz"
    board.put(f"launches/{root_id}.json", record)
    board.delete(f"released/{root_id}.json")
    value = handed(store)
    value[root_id] = root.profile
    _set_handed(store, value)
    return record


def release(store: Store, board: Board, launch_id: str, why: str = "taken back by the app") -> None:
    """The app takes the launch back: the controller stops watching it at its next poll."""
    root_id = root_of(store, launch_id)
    board.put(f"released/{root_id}.json", {"root_id": root_id, "ts": time.time(), "why": why})
    value = handed(store)
    value.pop(root_id, None)
    _set_handed(store, value)


def _pack(folder: Path) -> bytes:
    buf = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for f in sorted(folder.rglob("*")):
            if f.is_file() and not f.is_symlink():
                total += f.stat().st_size
                if total > MAX_WORKDIR_BYTES:
                    raise ConfigError(f"the job's folder {folder} is over {MAX_WORKDIR_BYTES // 2**20} MB: too big to "
                                      "hand to the controller", hint="put data in a storage mount (copy) instead")
                tar.add(f, arcname=f.relative_to(folder).as_posix())
    return buf.getvalue()


# -- the controller's side ------------------------------------------------------------------------
def take_in(store: Store, board: Board, workdirs: Path) -> list[str]:
    """Import every launch handed over and not released; returns the root ids now watched."""
    released = {rec.get("root_id") for _, rec in board.records("released")}
    watched = []
    for _, rec in board.records("launches"):
        root_id = str(rec.get("root_id") or "")
        if not root_id or root_id in released:
            continue
        try:
            _import_handed(store, board, rec, workdirs)
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("launch %s on the board cannot be read: %s", root_id, exc)
            continue
        watched.append(root_id)
    value = {r: store.get_launch(r).profile for r in watched}
    _set_handed(store, value)
    return watched


def _import_handed(store: Store, board: Board, rec: dict[str, Any], workdirs: Path) -> None:
    root = launch_from_json(rec["launch"])
    spec = dict(root.spec or {})
    if rec.get("workdir"):
        target = workdirs / root.launch_id
        if not target.is_dir():
            data = board.get_bytes(rec["workdir"])
            if data is None:
                raise ValueError("its workdir archive is missing")
            _unpack(data, target)
        spec["workdir"] = str(target)
    spec_from_dict(spec)  # a spec this version cannot read is refused here, not at relaunch time
    _ensure_launch(store, LaunchRecord(**{**launch_to_json(root), "spec": spec}))
    for lid, raw in (rec.get("records") or {}).items():
        r = launch_from_json(raw)
        _ensure_launch(store, LaunchRecord(**{**launch_to_json(r), "spec": {**(r.spec or {}),
                                                                            "workdir": spec.get("workdir")}}))
    for a in rec.get("attempts") or []:
        store.add_attempt(AttemptRecord(**a))
    b = rec.get("budget")
    if b and store.get_budget(budgets.launch_scope(root.launch_id)) is None:
        budgets.set_launch(store, root.launch_id, float(b["amount"]), str(b["currency"]), bool(b["enforce"]))


def _ensure_launch(store: Store, rec: LaunchRecord) -> None:
    known = store.find_launch(rec.launch_id)
    if known is None:
        store.add_launch(rec)
    elif not known.spec and rec.spec:  # found from the cloud's tags before the board was read
        store.update_launch(rec.launch_id, spec=rec.spec, name=rec.name, created_at=rec.created_at)


def _unpack(data: bytes, target: Path) -> None:
    tmp = target.with_name(target.name + ".part")
    tmp.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        members = tar.getmembers()
        for m in members:  # what _pack writes: regular files under relative paths, nothing else
            if not m.isfile() or m.name.startswith("/") or ".." in Path(m.name).parts:
                raise ValueError(f"its workdir archive holds {m.name!r}, which the app never writes")
        for m in members:
            m.mode = 0o644 | (m.mode & 0o111)
        tar.extractall(tmp, members=members)  # checked above (Python < 3.11.4 has no extraction filter)
    tmp.replace(target)


# -- both sides --------------------------------------------------------------------------------------
def import_outcomes(store: Store, board: Board, roots: list[str]) -> list[str]:
    """Bring the attempts either side relaunched (the board's ``launched`` claims) into ``store``.

    The new attempt's record keeps this store's workdir (the root's).  Returns the launch ids added.
    """
    added = []
    for root_id in roots:
        root = store.find_launch(root_id)
        if root is None:
            continue
        for _, claim in board.records(f"claims/{root_id}"):
            result = claim.get("result") or {}
            if claim.get("state") != "launched" or not result.get("launch"):
                continue
            made = launch_from_json(result["launch"])
            if store.attempt_of(made.launch_id) is not None and store.find_launch(made.launch_id) is not None:
                continue
            spec = {**(made.spec or {}), "workdir": (root.spec or {}).get("workdir")}
            _ensure_launch(store, LaunchRecord(**{**launch_to_json(made), "spec": spec}))
            ended = result.get("ended") or {}
            n = int(claim.get("attempt") or 2)
            if ended.get("launch_id"):
                if store.attempt_of(ended["launch_id"]) is None:
                    store.add_attempt(AttemptRecord(ended["launch_id"], root_id, n - 1, root.created_at, "running"))
                store.end_attempt(ended["launch_id"], str(ended.get("reason") or ""), str(ended.get("detail") or ""),
                                  float(ended.get("ts") or time.time()))
            got = result.get("attempt")
            store.add_attempt(AttemptRecord(**got) if got else
                              AttemptRecord(made.launch_id, root_id, n, made.created_at, "running"))
            added.append(made.launch_id)
    return added


def board_of(accounts: Any, profile_name: str) -> Board:
    """The board of the profile named ``profile_name`` (NotFoundError / ConfigError as :meth:`Board.of_profile`)."""
    return Board.of_profile(accounts, accounts.profile(profile_name), paths.install_id())


def post_attempts(store: Store, board: Board, roots: list[str]) -> None:
    """Every attempt of the watched launches, with how it ended and what it cost, as ``attempts/<root>.json``."""
    from workbench.core.lifecycle.recovery import history

    for root_id in roots:
        try:
            rows = history(store, root_id)
        except Exception as exc:  # noqa: BLE001 - one launch's record must not stop the others
            log.warning("attempts of %s cannot be listed: %s", root_id, exc)
            continue
        ids = {str(r["launch_id"]) for r in rows}
        machines = [{"instance": i.to_json(),
                     "ledger": [[e.ts, e.state, e.price_per_hour, e.storage_per_hour]
                                for e in store.ledger(i.provider, i.profile, i.instance_id)]}
                    for i in store.list_instances() if i.launch_id in ids]
        record = {"root_id": root_id, "attempts": rows, "machines": machines, "ts": time.time()}
        got = board.get(f"attempts/{root_id}.json")
        if got is None or got[0].get("attempts") != rows or got[0].get("machines") != machines:
            board.put(f"attempts/{root_id}.json", record)


def import_attempts(store: Store, board: Board, roots: list[str]) -> list[dict[str, Any]]:
    """The other side's attempt rows of ``roots``: ends recorded here too (so recovery here does not act on an
    attempt the other side decided); returns every row read (with its cost, for "while you were away")."""
    rows: list[dict[str, Any]] = []
    for root_id in roots:
        got = board.get(f"attempts/{root_id}.json")
        if got is None:
            continue
        for machine in got[0].get("machines") or []:
            _replay(store, machine)
        for row in got[0].get("attempts") or []:
            rows.append(row)
            lid = str(row.get("launch_id") or "")
            mine = store.attempt_of(lid)
            if mine is None or mine.ended_at is not None or row.get("ended_at") is None:
                continue
            store.end_attempt(lid, str(row.get("end_reason") or ""), str(row.get("detail") or ""),
                              float(row["ended_at"]))
    return rows


def _replay(store: Store, machine: dict[str, Any]) -> None:
    """Bring the other side's record of a machine into this store: its billing history (state and price from
    each time on) before what this store saw first, so Spend and ``attempts`` count what it cost."""
    from workbench.core.domain.models import Instance, InstanceState

    try:
        raw = dict(machine["instance"])
        raw.pop("billable", None)
        raw["state"] = InstanceState(raw["state"])
        inst = Instance(**raw)
        theirs = [(float(ts), InstanceState(state), float(price), storage) for ts, state, price, storage
                  in machine.get("ledger") or []]
    except (KeyError, TypeError, ValueError) as exc:
        log.warning("a machine on the board cannot be read: %s", exc)
        return
    mine = store.ledger(inst.provider, inst.profile, inst.instance_id)
    first_seen = mine[0].ts if mine else None
    earlier = [t for t in theirs if first_seen is None or t[0] < first_seen]
    if not earlier:
        return
    known = store.get_instance(inst.provider, inst.profile, inst.instance_id)
    for ts, state, price, storage in earlier:
        extra = {**inst.extra, "storage_per_hour": storage} if storage is not None else inst.extra
        store.upsert_instance(dataclasses.replace(inst, state=state, price_per_hour=price, extra=extra), ts=ts)
    if known is not None:  # what this store knew last stays the machine's current state
        store.upsert_instance(known, ts=mine[-1].ts)
    elif theirs[-1][1] != earlier[-1][1]:
        store.upsert_instance(inst, ts=theirs[-1][0])


LOG_BYTES = 4 * 1024 * 1024  # the tail of an attempt's log kept on the board


def post_logs(board: Board, launch_ids: list[str], sent: dict[str, int]) -> None:
    """The local copy of each attempt's log (the job's output the controller pulled), when it grew since ``sent``."""
    for lid in launch_ids:
        path = paths.job_log(lid)
        try:
            size = path.stat().st_size
        except OSError:
            continue
        if sent.get(lid) == size:
            continue
        with open(path, "rb") as fh:
            fh.seek(max(0, size - LOG_BYTES))
            board.put_bytes(f"logs/{lid}.log", fh.read())
        sent[lid] = size


def import_logs(store: Store, board: Board, roots: list[str]) -> list[str]:
    """Logs of attempts the other side ran, into this computer's local copies (``workbench logs``, the Logs view),
    where this side has none or a shorter one; the launch ids whose log was brought."""
    brought = []
    for root_id in roots:
        for a in store.attempts(root_id):
            path = paths.job_log(a.launch_id)
            have = path.stat().st_size if path.exists() else 0
            data = board.get_bytes(f"logs/{a.launch_id}.log")
            if data is None or len(data) <= have:
                continue
            tmp = path.with_name(path.name + ".part")
            tmp.write_bytes(data)
            tmp.replace(path)
            brought.append(a.launch_id)
    return brought
