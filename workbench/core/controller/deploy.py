"""Creating, finding and ending an account's controller machine.

The controller is a launch like every other (``launcher.execute``: recorded, tagged, guarded, listed in
Instances, ``status``, Spend, Stop all billing, ``down --all``), of a job whose ``setup`` installs the workbench
(:mod:`.bundle`: the app's own wheel, pinned dependencies) into a virtual environment and whose ``run`` is
``workbench controller serve``.  It differs in three things only: its machine is the cheapest small CPU type
of the cloud (:mod:`workbench.core.money.controller_cost`), its resources carry ``TAG_ROLE: ROLE_CONTROLLER``
(the plugin gives the machine the controller's own cloud identity: :class:`SupportsController`), and its job
has no max runtime and no idle guard: it ends itself when it has nothing to watch (``on_finish: terminate``).

On the machine (``setup``): a virtual environment under ``~/.workbench-controller``; when systemd is there and
may be used (root or passwordless sudo), a ``workbench-controller`` unit that restarts on failure and starts
at boot (so a reboot does not end the watching); else ``run`` restarts the service itself on failure.

Threading: blocks on the network; call from a worker.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from workbench.core import paths
from workbench.core.controller import bundle
from workbench.core.controller.board import Board
from workbench.core.controller.service import HEARTBEAT, ControllerConfig
from workbench.core.domain.errors import CapacityError, ConfigError, NotFoundError, WorkbenchError
from workbench.core.domain.models import Guards, JobSpec, OnFinish, Profile, Resources
from workbench.core.providers.contract import ROLE_CONTROLLER, TAG_ROLE, ControllerIdentity, SupportsController

log = logging.getLogger("workbench.controller")

NAME = "workbench-controller"
ENV_MARK = "WORKBENCH_CONTROLLER"
DEFAULT_POLL_S = 30.0
DEFAULT_IDLE_END_S = 1800.0
#: store setting per profile: the user said yes to creating its controller (and its identities) once
CONFIRMED = "controller:confirmed:"
#: the controller machine's own on_finish waits this long after the service ended (no app takes over there)
END_GRACE_S = 60

SETUP = r"""# the controller's install (Cloud GPU Workbench): the app's own wheel and pinned dependencies
set -e
C="$HOME/.workbench-controller"
mkdir -p "$C"
chmod 600 notify.json 2>/dev/null || true
if [ ! -x "$C/venv/bin/python" ]; then
  python3 -m venv "$C/venv" || { echo "[workbench] python3 -m venv failed: installing python3-venv";
    (sudo -n apt-get update -q && sudo -n apt-get install -y -q python3-venv) && python3 -m venv "$C/venv"; }
fi
if [ -d wheelhouse ]; then
  echo "[workbench] installing the dependencies from the wheelhouse the app carried (no package index)"
  "$C/venv/bin/pip" install -q --no-index --find-links wheelhouse -r requirements.txt
else
  echo "[workbench] installing the pinned dependencies from the package index"
  "$C/venv/bin/pip" install -q -r requirements.txt
fi
"$C/venv/bin/pip" install -q --no-deps --force-reinstall ./cloud_gpu_workbench-*.whl
"$C/venv/bin/workbench" --version
if [ -d /run/systemd/system ] && [ -z "$WORKBENCH_SUPERVISOR" ] && { [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; }; then
  S=""; [ "$(id -u)" = 0 ] || S="sudo -n"
  B="${WORKBENCH_REMOTE_DIR:-$HOME/.workbench}"
  printf '%s\n' "[Unit]" "Description=Cloud GPU Workbench controller" "After=network-online.target" \
    "[Service]" "User=$(id -un)" "WorkingDirectory=$PWD" "Environment=WORKBENCH_HOME=$C/home" \
    "Environment=WORKBENCH_CONTROLLER_END=$B/bin/workbench-end-bill terminate" \
    "ExecStart=$C/venv/bin/workbench controller serve --config $PWD/controller.json" \
    "Restart=on-failure" "RestartSec=5" "[Install]" "WantedBy=multi-user.target" \
    | $S tee /etc/systemd/system/workbench-controller.service > /dev/null
  $S systemctl daemon-reload && $S systemctl enable -q workbench-controller && echo systemd > "$C/supervisor"
else
  echo loop > "$C/supervisor"
fi
"""

RUN = r"""# the controller's service: systemd's unit when setup made one, else restarted here on failure
C="$HOME/.workbench-controller"
export WORKBENCH_HOME="$C/home"
if [ "$(cat "$C/supervisor" 2>/dev/null)" = systemd ]; then
  S=""; [ "$(id -u)" = 0 ] || S="sudo -n"
  $S systemctl start workbench-controller
  journalctl -f -o cat -u workbench-controller 2>/dev/null &
  while :; do
    state=$(systemctl show -p ActiveState --value workbench-controller)
    case "$state" in active|activating|deactivating|reloading) sleep 10 ;; *) break ;; esac
  done
  exit "$(systemctl show -p ExecMainStatus --value workbench-controller)"
fi
while :; do
  "$C/venv/bin/workbench" controller serve --config controller.json && exit 0
  echo "[workbench] the controller stopped with exit code $?: starting it again in 5 s"
  sleep 5
done
"""


def is_controller(rec: Any) -> bool:
    """Whether a launch record is a controller's (its spec marks it)."""
    spec = getattr(rec, "spec", None) or {}
    return spec.get("name") == NAME and (spec.get("env") or {}).get(ENV_MARK) == "1"


def controllers(store: Any, profile: str | None = None, live_only: bool = True) -> list[Any]:
    """The controller launches in the store (newest first); ``live_only``: those whose machine may still bill."""
    out = []
    for rec in store.list_launches():
        if not is_controller(rec) or (profile and rec.profile != profile):
            continue
        insts = store.list_instances(launch_id=rec.launch_id)
        if live_only and not (rec.status == "launching" or any(i.state.billable for i in insts)):
            continue
        out.append(rec)
    return out


def spec_for(workdir: Path, disk_gb: int) -> JobSpec:
    return JobSpec(name=NAME, run=RUN, setup=SETUP, resources=Resources(disk_gb=disk_gb),
                   env={ENV_MARK: "1"}, workdir=str(workdir), on_finish=OnFinish.TERMINATE,
                   guards=Guards(max_runtime_minutes=None, idle_minutes=None))


@dataclass
class Planned:
    """What ``up`` would create: the offer, its all-in price, and the identity it needs."""

    profile: Profile
    choice: Any  # RankedOffer
    cost: Any  # ControllerCost
    identity: ControllerIdentity | None
    board: str
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        c = self.cost
        return {"profile": self.profile.name, "provider": self.profile.provider, "region": self.choice.offer.region,
                "instance_type": self.choice.offer.instance_type,
                "cost": c.to_json() if hasattr(c, "to_json") else None,
                "identity": None if self.identity is None else {
                    "name": self.identity.name, "ready": self.identity.ready, "missing": list(self.identity.missing),
                    "created": list(self.identity.created), "policy_files": list(self.identity.policy_files)},
                "board": self.board, "notes": self.notes}


def plan(accounts: Any, profile: Profile, create_identity: bool = False) -> Planned:
    """The controller's offer and all-in cost on ``profile`` (and its identity, created when asked)."""
    from workbench.core.money.controller_cost import controller_cost
    from workbench.core.offers.find import NEVER, find_offers

    board = Board.of_profile(accounts, profile, paths.install_id())
    region = profile.region
    cost = controller_cost(profile.provider, region)
    spec = spec_for(Path("."), int(getattr(cost, "disk_gb", 0) or 8))
    found = find_offers(accounts, spec, profiles=[profile], region=cost.region, catalog=NEVER)
    if found.errors:
        raise found.errors[0][1]
    usable = [r for r in found.ranked if r.offer.instance_type == cost.instance_type and r.offer.available]
    if not usable:
        raise CapacityError(f"{cost.instance_type} (the controller's machine) is not available on profile "
                            f"{profile.name!r} in {cost.region}",
                            hint="check the account's quota for small instances in that region")
    provider = accounts.provider(profile)
    identity = provider.controller_identity(create=create_identity) if isinstance(provider, SupportsController) \
        else None
    return Planned(profile, usable[0], cost, identity, board.where())


def stage(folder: Path, config: ControllerConfig, providers: list[str], wheelhouse: Path | None = None,
          notify: Callable[[Path], None] | None = None) -> Path:
    """The controller's workdir: wheel, pinned requirements, its configuration (and a wheelhouse when given)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    bundle.build_wheel(folder, providers)
    bundle.write_requirements(folder, providers)
    if wheelhouse is not None:
        if not Path(wheelhouse).is_dir():
            raise NotFoundError(f"no wheelhouse folder {wheelhouse}")
        shutil.copytree(wheelhouse, folder / "wheelhouse")
    if notify is not None:
        notify(folder / "notify.json")
        config.notify_file = "notify.json"
    config.save(folder / "controller.json")
    return folder


@dataclass
class UpResult:
    launch_id: str
    planned: Planned
    instances: list[Any]
    already: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"launch_id": self.launch_id, "already": self.already, **self.planned.to_json(),
                "instances": [i.instance_id for i in self.instances]}


def up(accounts: Any, profile: Profile, wheelhouse: Path | None = None, poll_s: float = DEFAULT_POLL_S,
       idle_end_s: float = DEFAULT_IDLE_END_S, notify: Callable[[Path], None] | None = None,
       progress: Callable[[str], None] | None = None, finish_grace_s: float = 120.0,
       renew_s: float = 2400.0) -> UpResult:
    """Create the profile's controller (identity, board check, launch); the caller then starts its job on the
    machine (``RemoteJob.launch``) as for every launch.  A live controller of the profile is returned as is."""
    from workbench.core.lifecycle.launcher import execute, plan_offer

    live = controllers(accounts.store, profile.name)
    if live:
        planned = Planned(profile, None, None, None, "")
        return UpResult(live[0].launch_id, planned, accounts.store.list_instances(launch_id=live[0].launch_id),
                        already=True)
    planned = plan(accounts, profile, create_identity=True)
    if planned.identity is not None and not planned.identity.ready:
        raise ConfigError(f"the controller's cloud identity {planned.identity.name!r} is not ready on profile "
                          f"{profile.name!r}", hint="ask an administrator for: " + "; ".join(planned.identity.missing))
    board = Board.of_profile(accounts, profile, paths.install_id())
    board.put("probe.json", {"ts": time.time(), "by": "app"})  # the bucket takes our writes: fail before billing
    lp = plan_offer(accounts, spec_for(Path("."), int(getattr(planned.cost, "disk_gb", 0) or 8)), planned.choice)
    config = ControllerConfig(launch_id=lp.launch_id, install_id=paths.install_id(), poll_s=poll_s,
                              idle_end_s=idle_end_s, version=bundle.version(), finish_grace_s=finish_grace_s,
                              renew_s=renew_s,
                              profile={"name": profile.name, "provider": profile.provider, "region": profile.region,
                                       "endpoint_url": profile.endpoint_url,
                                       "settings": controller_settings(profile, planned.identity)},
                              extra=machine_identity(planned.identity))
    folder = stage(paths.data_dir() / "controller" / lp.launch_id, config, [profile.provider], wheelhouse, notify)
    lp = dataclasses.replace(lp, spec=dataclasses.replace(lp.spec, workdir=str(folder)))
    instances = execute(accounts, lp, progress=progress, extra_tags={TAG_ROLE: ROLE_CONTROLLER})
    return UpResult(lp.launch_id, planned, instances)


def start(accounts: Any, result: UpResult, grace_s: int = END_GRACE_S, options: Any = None) -> bool:
    """Upload the controller's install to its machine and start it there (blocks through the boot, the
    upload and the install's start); the app does not follow it afterwards: it runs on its own."""
    from workbench.core.domain.jobspec import spec_from_dict
    from workbench.core.remote.job import RemoteJob
    from workbench.core.remote.job_state import JobOptions

    rec = accounts.store.get_launch(result.launch_id)
    opts = options or JobOptions()
    opts.grace_s = grace_s
    (inst, *_) = result.instances
    return RemoteJob(accounts, inst, spec_from_dict(rec.spec), opts).launch()


def controller_settings(profile: Profile, identity: ControllerIdentity | None) -> dict[str, str]:
    """The profile's settings as the controller uses them: a role may not mint a job's storage credentials the
    way a user's key does (AWS: no GetFederationToken from a role), so the job storage role its identity came
    with becomes the profile's ``storage_role_arn`` there."""
    settings = dict(profile.settings)
    role = (identity.details or {}).get("job_storage_role_arn") if identity is not None else None
    if role and not settings.get("storage_role_arn"):
        settings["storage_role_arn"] = role
    return settings


def machine_identity(identity: ControllerIdentity | None) -> dict[str, Any]:
    """``controller.json``'s ``extra``: the non-secret fields the controller's plugin signs in with as its machine
    (Azure: the managed identity's client id, subscription, tenant; Alibaba: the RAM role's name), read back by
    ``serve`` into :class:`.service.MachineCredentials`."""
    fields = dict(identity.machine) if identity is not None else {}
    return {"identity": fields} if fields else {}


def heartbeat(accounts: Any, profile: Profile) -> dict[str, Any] | None:
    got = Board.of_profile(accounts, profile, paths.install_id()).get(HEARTBEAT)
    return got[0] if got else None


def status(accounts: Any, profile: Profile, now: float | None = None) -> dict[str, Any]:
    """The profile's controller: its launch and machine, heartbeat, what it watches, its identity, its price."""
    from workbench.core.controller.away import is_reachable
    from workbench.core.controller.handover import handed

    now = time.time() if now is None else now
    store = accounts.store
    live = controllers(store, profile.name)
    rec = live[0] if live else None
    insts = store.list_instances(launch_id=rec.launch_id) if rec else []
    beat: dict[str, Any] | None = None
    board_error = None
    try:
        beat = heartbeat(accounts, profile)
    except WorkbenchError as exc:
        board_error = exc.message
    provider = accounts.provider(profile)
    identity = None
    if isinstance(provider, SupportsController):
        try:
            identity = provider.controller_identity(create=False)
        except WorkbenchError as exc:
            identity = ControllerIdentity(name="?", ready=False, missing=(exc.message,))
    return {
        "profile": profile.name, "launch_id": rec.launch_id if rec else None,
        "state": insts[0].state.value if insts else (rec.status if rec else "none"),
        "instance_type": insts[0].instance_type if insts else None, "region": insts[0].region if insts else None,
        "heartbeat": beat, "reachable": is_reachable(beat, now) if rec else False,
        "handed": sorted(r for r, p in handed(store).items() if p == profile.name),
        "identity": None if identity is None else {"name": identity.name, "ready": identity.ready,
                                                   "missing": list(identity.missing)},
        "board_error": board_error,
    }


def down(accounts: Any, profile: Profile, timeout: float = 600.0, poll: float = 2.0) -> Any:
    """End the profile's controller (verified teardown); the launches it watched go back to the app."""
    from workbench.core.lifecycle.teardown import teardown

    ids = [r.launch_id for r in controllers(accounts.store, profile.name, live_only=False)
           if r.status not in ("terminated",)]
    return teardown(accounts, ids, timeout=timeout, poll=poll) if ids else None


def wait_for_heartbeat(accounts: Any, profile: Profile, launch_id: str, since: float, timeout: float,
                       should_stop: Callable[[], bool] = lambda: False, poll: float = 2.0) -> dict[str, Any] | None:
    """The first heartbeat of the controller ``launch_id`` written after ``since`` (None at the timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not should_stop():
        try:
            beat = heartbeat(accounts, profile)
        except WorkbenchError as exc:
            log.info("no heartbeat yet: %s", exc.message)
            beat = None
        if beat and beat.get("launch_id") == launch_id and float(beat.get("ts") or 0) >= since:
            return beat
        time.sleep(poll)
    return None
