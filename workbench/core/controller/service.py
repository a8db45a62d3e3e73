"""The controller's loop: the app's own engines, headless, on a small machine in the user's account.

``workbench controller serve`` runs :class:`Controller` on the controller machine (installed and started by
:mod:`.deploy`).  Each poll, every ``poll_s``:

1. takes in the launches the app handed over on the board (:func:`.handover.take_in`) and the attempts the app
   relaunched itself while it ran (:func:`.handover.import_outcomes` / :func:`.handover.import_attempts`);
2. runs the app's :class:`~workbench.core.lifecycle.guards.GuardEngine` (reconcile from the cloud's tags, budget,
   max runtime, idle GPU, job finished → verified teardown) on those launches only — never on the user's
   other launches, which the same owner tag also lists;
3. runs the app's :class:`~workbench.core.lifecycle.recovery.RecoveryEngine` with the board's claims
   (:class:`.claims.BoardClaims`), so a relaunch happens once even when the app runs too;
4. follows the attempts it relaunched as the app would (upload, start, log, exit code:
   :class:`~workbench.core.remote.jobs.RemoteJobs`) and adds the app's public key to their machines, so the
   app reads their logs as today;
5. writes what happened to the board (events, each attempt with its cost, the heartbeat) and sends the
   profile's notifications when configured (:mod:`workbench.core.notify`, a 0600 file on the machine).

With nothing to watch for ``idle_end_s`` (default 30 min) it returns 0: the job runner on the machine then
applies the controller launch's ``on_finish: terminate`` through the instance guard every job already uses
(AWS: a shutdown that terminates; Azure: the guard deletes its own resource group; Alibaba: a shutdown, and
the instance's AutoReleaseTime), so the controller never bills forever.

Credentials: the machine's own cloud identity only (:class:`MachineCredentials`: no stored secret; the
plugins fall back to their SDK's default chain, which reads the instance's role from the metadata service).
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from workbench.core import paths
from workbench.core.controller import handover
from workbench.core.controller.board import Board
from workbench.core.controller.claims import BoardClaims
from workbench.core.domain.errors import ConfigError, WorkbenchError
from workbench.core.domain.models import Profile

log = logging.getLogger("workbench.controller")

HEARTBEAT = "controller.json"
OWN_DEADLINE_S = 2 * 3600.0  # the controller machine's cloud-side deadline (Alibaba AutoReleaseTime) is kept this far
OWN_EXTEND_EVERY_S = 1800.0
FIRST_LOOK_S = 600.0  # a handed launch whose machines were never listed is watched this long


@dataclass
class ControllerConfig:
    """What the app writes for its controller (``controller.json`` in the controller's job folder)."""

    launch_id: str  # the controller's own launch
    profile: dict[str, Any]  # name, provider, region, endpoint_url, settings (no secret)
    install_id: str  # the app's: the owner tag of everything the controller makes and finds
    poll_s: float = 30.0
    idle_end_s: float = 1800.0
    retry_s: float = 300.0
    finish_grace_s: float = 120.0
    #: how often the storage credentials of the attempts it relaunched are minted again: on AWS they come from a
    #: role the controller assumes with its own role's session, and AWS caps such chained sessions at one hour
    renew_s: float = 2400.0
    version: str = ""
    notify_file: str | None = None  # 0600, beside this file, when the profile has notifications
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> "ControllerConfig":
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            return cls(**data)
        except (OSError, ValueError, TypeError) as exc:
            raise ConfigError(f"the controller's configuration {path} cannot be read: {exc}") from None

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(asdict(self), indent=2, sort_keys=True), encoding="utf-8")

    def profile_obj(self) -> Profile:
        p = self.profile
        return Profile(str(p["name"]), str(p["provider"]), p.get("region"), endpoint_url=p.get("endpoint_url"),
                       settings=dict(p.get("settings") or {}))


class MachineCredentials:
    """The credential store of the controller: no secret stored; every plugin uses the machine's own identity.

    ``identity``: the non-secret fields that name that identity where a cloud needs them (e.g. an Azure managed
    identity's client id and subscription), from ``controller.json``'s ``extra["identity"]``.
    ``machine_identity``: :class:`~workbench.core.providers.accounts.Accounts` refuses no profile for a missing
    secret and tells each plugin (``ProviderContext.machine_identity``) to sign in as the machine.
    """

    machine_identity = True

    def __init__(self, identity: dict[str, str] | None = None) -> None:
        self.identity = dict(identity or {})

    def get(self, provider: str, profile: str) -> dict[str, str]:
        return dict(self.identity)

    def set(self, provider: str, profile: str, values: Any) -> None:
        raise ConfigError("the controller keeps no credentials: it runs as its machine's cloud identity")

    def delete(self, provider: str, profile: str) -> None:
        return None


def ensure_install_id(install_id: str) -> None:
    """Make this machine's workbench the app's installation (the owner tag it makes and finds things by)."""
    path = paths.config_dir() / "install-id"
    if not path.exists() or path.read_text(encoding="utf-8").strip() != install_id:
        path.write_text(install_id + "\n", encoding="utf-8")


class Controller:
    """One account's controller (see the module doc).  ``run`` blocks; ``poll_once`` is one round."""

    def __init__(self, config: ControllerConfig, accounts: Any, board: Board | None = None,
                 clock: Callable[[], float] = time.time, say: Callable[[str], None] | None = None,
                 notifier: Any = None) -> None:
        from workbench.core.lifecycle.guards import GuardEngine
        from workbench.core.lifecycle.recovery import RecoveryEngine

        self.config = config
        self.accounts = accounts
        self.clock = clock
        self.say = say or (lambda line: log.info("%s", line))
        self.notifier = notifier
        self.profile = config.profile_obj()
        self.board = board or Board.of_profile(accounts, self.profile, config.install_id)
        self.owner = f"controller:{config.launch_id}"
        self.claims = BoardClaims(self.board, self.owner, config.retry_s, clock)
        self.events: list[tuple[dict[str, Any], Any]] = []  # (board record, the engine's event) of this round
        self.roots: list[str] = []
        self.guards = GuardEngine(accounts, clock=clock, on_event=self._on_event, retry_s=config.retry_s,
                                  finish_grace_s=config.finish_grace_s, collect_samples=False,
                                  only=self._watched_ids)
        self.recovery = RecoveryEngine(accounts, clock=clock, on_event=self._on_event, retry_s=config.retry_s,
                                       claims=self._claims_of)
        self.remote: Any = None
        self.authorized: set[str] = set()
        self.started = clock()
        self.last_busy = clock()
        self._extended_at = 0.0
        self._logs_sent: dict[str, int] = {}
        self._renewed: dict[str, float] = {}  # attempt → when its storage credentials were last minted
        self.workdirs = paths.data_dir() / "controller" / "workdirs"

    # -- engines' hooks --------------------------------------------------------------------------
    def _claims_of(self, root: Any) -> BoardClaims | None:
        return self.claims if root.launch_id in self.roots else None

    def _watched_ids(self) -> set[str]:
        store = self.accounts.store
        ids = set(self.roots)
        for r in self.roots:
            ids.update(a.launch_id for a in store.attempts(r))
        return ids

    def _on_event(self, ev: Any) -> None:
        record = {"source": "controller", "kind": type(ev).__name__, **ev.to_json()}
        self.events.append((record, ev))
        self.say(f"[{record.get('guard') or 'recovery'}] {record.get('action')} {record.get('launch_id')}: "
                 f"{record.get('message')}")

    # -- one round -------------------------------------------------------------------------------
    def poll_once(self) -> bool:
        """One round (see the module doc); True when something is being watched."""
        store = self.accounts.store
        began = time.monotonic()
        self.roots = handover.take_in(store, self.board, self.workdirs)
        handover.import_outcomes(store, self.board, self.roots)
        handover.import_attempts(store, self.board, self.roots)
        self.events = []
        if self.roots:
            self.guards.poll()
            self.recovery.poll()
            self._follow()
            handover.post_logs(self.board, sorted(self._mine()), self._logs_sent)  # the app reads them as its own
            self._renew_storage(self.clock())
            handover.post_attempts(store, self.board, self.roots)
        for record, ev in self.events:
            self.board.add_event({**record, "profile": self.profile.name})
            self._notify(ev)
        busy = [r for r in self.roots if self._busy(r)]
        now = self.clock()
        self._keep_own_deadline(now)
        if busy:
            self.last_busy = now
        self._beat(busy, now, time.monotonic() - began)
        return bool(busy)

    def _keep_own_deadline(self, now: float) -> None:
        """Move this machine's cloud-side deadline forward while it runs (Alibaba AutoReleaseTime: the launch
        starts with now + 2 h so a controller that stops polling is released by the cloud itself)."""
        from workbench.core.providers.contract import SupportsExtend

        if now - self._extended_at < OWN_EXTEND_EVERY_S:
            return
        own = [i for i in self.accounts.store.list_instances(launch_id=self.config.launch_id) if i.state.active]
        provider = self.accounts.provider(self.profile)
        if not own or not isinstance(provider, SupportsExtend):
            return
        try:
            provider.extend(own, now + OWN_DEADLINE_S)
            self._extended_at = now
        except WorkbenchError as exc:
            self.say(f"[controller] its own deadline could not be moved: {exc.message}")

    def _busy(self, root_id: str) -> bool:
        store = self.accounts.store
        attempts = store.attempts(root_id)
        ids = {root_id} | {a.launch_id for a in attempts}
        insts = [i for i in store.list_instances() if i.launch_id in ids]
        if any(i.state.billable for i in insts):
            return True
        rec = store.find_launch(root_id)
        if rec is not None and (rec.spec or {}).get("recovery"):
            live = [a for a in attempts if a.status != "launch_failed"]
            if live and max(live, key=lambda a: a.attempt).ended_at is None:
                return True  # recovery has not decided yet (or retries a relaunch)
            if not live:
                return True
        if not insts:
            rec_at = rec.created_at if rec is not None else 0.0
            return self.clock() - max(rec_at, self.started) < FIRST_LOOK_S
        return False

    def _mine(self) -> set[str]:
        """The attempts this controller relaunched (the claims it won), of the launches it watches."""
        return {str(c.get("launch_id")) for r in self.roots for c in self.claims.outcomes(r)
                if c.get("owner") == self.owner and c.get("state") == "launched" and c.get("launch_id")}

    def _follow(self) -> None:
        """Start (or keep following) the job of each attempt this controller relaunched."""
        store = self.accounts.store
        mine = self._mine()
        from workbench.core.remote.kinds import is_remote

        insts = [i for i in store.list_instances() if i.launch_id in mine and is_remote(i)]
        if not insts:
            return
        if self.remote is None:
            from workbench.core.remote.job_state import JobOptions
            from workbench.core.remote.jobs import RemoteJobs

            # as in the app: the finish guard ends the machine (its event is what "finished" tells the user)
            self.remote = RemoteJobs(self.accounts, telemetry=False, options=JobOptions(teardown_by_guards=True))
        self.remote.sync(insts, {r.launch_id: r for r in store.list_launches() if r.launch_id in mine})
        for inst in insts:
            if inst.instance_id not in self.authorized and inst.state.active and inst.host:
                self._authorize_app(inst)

    def _renew_storage(self, now: float) -> None:
        """Replace the storage credentials of the running attempts it relaunched before they expire."""
        from workbench.core.domain.jobspec import spec_from_dict
        from workbench.core.remote.connection import Target, connect
        from workbench.core.remote.storage import renew_credentials

        store = self.accounts.store
        for lid in sorted(self._mine()):
            rec = store.find_launch(lid)
            if rec is None or not (rec.spec or {}).get("storage"):
                continue
            since = self._renewed.setdefault(lid, now)  # minted when the job was started
            if now - since < self.config.renew_s:
                continue
            for inst in [i for i in store.list_instances(launch_id=lid) if i.state.active and i.host]:
                try:
                    with connect(Target.for_instance(inst, store.path.parent)) as conn:
                        if renew_credentials(conn, self.accounts, spec_from_dict(rec.spec), inst):
                            self._renewed[lid] = now
                            self.say(f"[controller] renewed the storage credentials of {lid}")
                except WorkbenchError as exc:
                    self.say(f"[controller] the storage credentials of {lid} could not be renewed: {exc.message}")

    def _authorize_app(self, inst: Any) -> None:
        """Add the app's public key (from the handover) to a machine this controller started."""
        from workbench.core.controller.handover import root_of
        from workbench.core.remote.connection import Target, connect

        got = self.board.get(f"launches/{root_of(self.accounts.store, inst.launch_id)}.json")
        key = (got[0].get("app_public_key") if got else "") or ""
        if not key or "\n" in key or "'" in key:
            self.authorized.add(inst.instance_id)
            return
        line = ('umask 077; AK="${WORKBENCH_AUTHORIZED_KEYS:-$HOME/.ssh/authorized_keys}"; '
                'mkdir -p "$(dirname "$AK")" && touch "$AK" && '
                f"(grep -qxF '{key}' \"$AK\" || echo '{key}' >> \"$AK\")")
        try:
            with connect(Target.for_instance(inst, self.accounts.store.path.parent)) as conn:
                if conn.run(line, timeout=30).rc == 0:
                    self.authorized.add(inst.instance_id)
        except WorkbenchError as exc:
            log.info("the app's key is not on %s yet: %s", inst.instance_id, exc)

    def _notify(self, ev: Any) -> None:
        """``notifier(event)``: the profile's channel (webhook or mail), when the app gave the controller one."""
        if self.notifier is None:
            return
        try:
            self.notifier(ev)
        except Exception as exc:  # noqa: BLE001 - a notification must never stop the controller
            log.warning("a notification could not be sent: %s", exc)

    def _beat(self, busy: list[str], now: float, took: float) -> None:
        self.board.put(HEARTBEAT, {"launch_id": self.config.launch_id, "owner": self.owner, "ts": now,
                                   "poll_took_s": round(took, 3),
                                   "started": self.started, "version": self.config.version, "pid": os.getpid(),
                                   "poll_s": self.config.poll_s, "watching": busy, "handed": self.roots,
                                   "idle_since": None if busy else self.last_busy,
                                   "ends_at": None if busy else self.last_busy + self.config.idle_end_s})

    def _end_machine(self) -> None:
        """Under systemd (no job runner waiting for the exit code): end the bill through the instance guard."""
        command = os.environ.get("WORKBENCH_CONTROLLER_END")
        if not command:
            return  # the job runner applies on_finish: terminate when this process returns 0
        import shlex
        import subprocess

        try:
            subprocess.run(shlex.split(command), check=False, timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            self.say(f"[controller] ending the machine failed: {exc}")

    def run(self, should_stop: Callable[[], bool] = lambda: False) -> int:
        """Poll until nothing was watched for ``idle_end_s`` (0) or ``should_stop`` (0)."""
        self.say(f"controller {self.config.launch_id} watches the launches handed over on {self.board.where()} "
                 f"every {self.config.poll_s:g} s")
        while not should_stop():
            try:
                self.poll_once()
            except WorkbenchError as exc:
                self.say(f"[controller] poll failed: {exc.message}")
            if self.clock() - self.last_busy >= self.config.idle_end_s:
                self.say(f"[controller] nothing to watch for {self.config.idle_end_s:g} s: ending (the machine's "
                         "guard ends its bill)")
                self.board.add_event({"source": "controller", "kind": "ControllerEvent", "action": "idle_end",
                                      "level": "info", "launch_id": self.config.launch_id, "ts": self.clock(),
                                      "message": "the controller ended itself: nothing to watch",
                                      "profile": self.profile.name})
                self._end_machine()
                return 0
            time.sleep(self.config.poll_s)
        if self.remote is not None:
            self.remote.stop_all()
        return 0
