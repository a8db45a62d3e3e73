"""The Slurm provider: an existing cluster (a university's HPC, a cloud's own Slurm) reached over SSH to its login node.

A launch is one batch job, over one or more nodes: :meth:`SlurmProvider.launch` checks the request against the
cluster (partition, GPUs as GRES, time limit, account: ``sbatch --test-only``) before anything is queued and records
the launch; the app's SSH runner then uploads the workdir to the login node (a file system the compute nodes share)
and renders the job folder, which :mod:`.batch` turns into a batch job that :meth:`submit` queues.  One Instance per
launch (``instance_id`` = the job name ``wb-<launch id>``, ``host`` = the login node); its state is Slurm's:
PENDING (``extra["queue_reason"]``, ``extra["queue_start"]`` = ``squeue --start``'s estimate) → RUNNING → ended
(``extra["slurm_state"]``: COMPLETED, FAILED, TIMEOUT, CANCELLED, NODE_FAIL…, with the exit code).  Before its job
is queued (the upload) the launch is RUNNING with ``slurm_state`` SUBMITTING: the runner starts with running machines.

Profile settings: ``host``, ``port`` (22), ``user``; ``auth``, ``jump`` and the ``private_key`` credential (how to log
in: :mod:`.login`; a one-time code after the key through ``SupportsMfa``); optional ``partition``, ``account``,
``qos``; ``gpu_hour_rate`` (what a GPU-hour costs where the cluster charges; else $0, "your cluster") and
``currency``; ``gpu_models`` ("partition=Model, …" for clusters whose GRES name no GPU type).

``terminate`` = ``scancel`` of the user's own job of that name (never another user's: ``squeue --me``, ``scancel
-u``), verified.  A $0 job is precious (it may have queued for days): ``own_hardware`` makes Stop all list it apart.
Telemetry: ``srun --jobid … --overlap nvidia-smi`` on the job's nodes.  Storage mounts: rclone checked on the login
node at launch (the ``rclone`` setting), the agent once per batch job (:mod:`.mounts`).  Containers and spot recovery
on Slurm are refused with their reason (no container runtime can be tested here; a cluster has no spot machines).

Threading: as the contract says; one login connection per provider object (:mod:`.login`), records in files.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import math
import re
import shlex
import threading
import time
from typing import Any, Iterable, Mapping, Sequence

from workbench.core.domain.errors import ConfigError, NotFoundError, WorkbenchError
from workbench.core.domain.models import (GpuSample, Identity, Instance, InstanceState, JobSpec, LaunchRequest, Offer,
                                          Profile, Region, Resource)
from workbench.core.lifecycle.crashpoints import crash_point
from workbench.core.paths import check_launch_id
from workbench.core.providers.contract import Provider, ProviderContext, SettingField, SupportsBatchJobs, \
    SupportsMfa, SupportsTelemetry
from workbench.core.remote.supervisor import BASE_EXPR
from workbench.core.telemetry.nvidia_smi import QUERY_FIELDS, Reading, parse_line

from . import batch, cluster, mounts, queue
from .formats import SLURM_ENV
from .login import (DEFAULT_PORT, LOGIN_CREDENTIALS, LOGIN_SETTINGS, LoginNode, is_default, profile_login,
                    quote_all)
from .records import LaunchRecord, Records

log = logging.getLogger(__name__)

OFFERS_TTL_S = 30.0
#: a launch checks against the cluster as read this long ago at most (the offers it was chosen from)
SNAPSHOT_REUSE_S = 10.0
#: a launch whose job was never queued (its upload failed, the app closed) is listed as running this long
SUBMIT_WINDOW_S = 6 * 3600
CANCEL_WAIT_S = 60.0
ENDED = frozenset({"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
                   "BOOT_FAIL", "DEADLINE", "REVOKED", "SPECIAL_EXIT"})
#: states of a job that has not ended (squeue's long names): the listing needs no ``scontrol show job`` for them
LIVE = frozenset({"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
                  "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD"})


class SlurmProvider(Provider, SupportsBatchJobs, SupportsTelemetry, SupportsMfa):
    """Batch jobs on an existing Slurm cluster."""

    id = "slurm"
    display_name = "Slurm cluster"
    credential_fields = LOGIN_CREDENTIALS
    setting_fields = (
        SettingField("host", "Login node", optional=False, help="the address you ssh to, e.g. login.hpc.example.edu"),
        SettingField("user", "User", optional=False, help="your account name on the cluster"),
        SettingField("port", "SSH port", help="22 unless your cluster says otherwise"),
        SettingField("partition", "Partition", help="the default partition (empty: the cluster's default)"),
        SettingField("account", "Account", help="the Slurm account to charge (sbatch --account)"),
        SettingField("qos", "QOS", help="a quality of service (sbatch --qos)"),
        SettingField("gpu_hour_rate", "Price per GPU-hour",
                     help="what a GPU-hour costs you where the cluster charges; empty: free (your cluster)"),
        SettingField("currency", "Currency", help="of the price per GPU-hour (USD unless set)"),
        SettingField("gpu_models", "GPU models by partition",
                     help="for clusters whose GRES name no GPU type: partition=Model, e.g. gpu=A100, v100q=V100"),
        SettingField("rclone", "rclone on the cluster",
                     help="for storage mounts: its path on the login node when it is not on the PATH, "
                          "e.g. ~/bin/rclone"),
        *LOGIN_SETTINGS,
    )
    runs_jobs_over_ssh = True
    own_hardware = True

    def __init__(self, profile: Profile, secrets: Mapping[str, str], context: ProviderContext) -> None:
        super().__init__(profile, secrets, context)
        s = profile.settings
        self.host = str(s.get("host") or "").strip()
        self.user = str(s.get("user") or "").strip()
        self.port = self._int_setting("port", DEFAULT_PORT)
        self.ssh = profile_login(profile, self.user, secrets)
        self.login = LoginNode(profile.name, self.host, self.port, self.user, context.data_dir, self.ssh)
        self.records = Records(context.data_dir, profile.name)
        self._offers: tuple[float, list[Offer]] | None = None
        self._snap: tuple[float, cluster.ClusterSnapshot] | None = None
        self._offers_lock = threading.Lock()

    # -- settings -------------------------------------------------------------------------------
    def _int_setting(self, key: str, default: int) -> int:
        raw = str(self.profile.settings.get(key) or "").strip()
        if not raw:
            return default
        if not raw.isdecimal() or not 0 < int(raw) < 65536:
            raise ConfigError(f"profile {self.profile.name!r}: {key} must be a port number, not {raw!r}")
        return int(raw)

    def _text(self, key: str) -> str | None:
        return str(self.profile.settings.get(key) or "").strip() or None

    def rate(self) -> float | None:
        """The profile's price per GPU-hour; None when the cluster is free to the user."""
        raw = self._text("gpu_hour_rate")
        if raw is None:
            return None
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0:
            raise ConfigError(f"profile {self.profile.name!r}: gpu_hour_rate must be a number >= 0, not {raw!r}")
        return value

    def model_map(self) -> dict[str, str]:
        out = {}
        for part in re.split(r"[,\n]", self._text("gpu_models") or ""):
            key, eq, value = part.partition("=")
            if eq and key.strip() and value.strip():
                out[key.strip()] = value.strip()
        return out

    def provide_mfa_code(self, code: str) -> None:
        """The one-time code the login node asks for after the key (used once; the connection is then kept)."""
        self.ssh.give_code(code)

    @property
    def cluster_name(self) -> str:
        return self.host

    # -- account ---------------------------------------------------------------------------------
    def check_credentials(self) -> Identity:
        out = self.login.run("id -un; sinfo --version", timeout=30)
        lines = out.out.split()
        if out.rc != 0 or len(lines) < 2:
            raise ConfigError(f"the login node {self.host} has no Slurm commands for {self.user!r} "
                              f"({(out.err or out.out).strip()[:200]})",
                              hint="check that sinfo and sbatch work when you ssh to it")
        return Identity(account=self.host, principal=lines[0], display=f"{lines[0]}@{self.host} ({' '.join(lines[1:])})")

    def regions(self) -> list[Region]:
        return [Region(self.cluster_name, f"{self.cluster_name} (your cluster)")]

    def snapshot(self, max_age_s: float = 0.0) -> cluster.ClusterSnapshot:
        """The cluster's partitions and nodes; one read ``max_age_s`` old at most is reused (a launch right after
        the offers it chose from: ``sbatch --test-only`` has the last word anyway)."""
        with self._offers_lock:
            if self._snap is not None and time.monotonic() - self._snap[0] <= max_age_s:
                return self._snap[1]
        snap = cluster.parse_snapshot(self.login.check(cluster.SNAPSHOT_COMMAND, "reading the cluster", timeout=60))
        with self._offers_lock:
            self._snap = (time.monotonic(), snap)
        return snap

    def offers(self, region: str | None = None) -> Iterable[Offer]:
        if region not in (None, self.cluster_name):
            return []
        with self._offers_lock:
            if self._offers is not None and time.monotonic() - self._offers[0] < OFFERS_TTL_S:
                return list(self._offers[1])
        rate = self.rate()
        snap = self.snapshot()
        found = cluster.offers(cluster.shapes(snap, self.model_map()), provider=self.id,
                               region=self.cluster_name, rate_per_gpu_hour=rate,
                               currency=self._text("currency") or "USD", as_of=datetime.date.today().isoformat())
        found = [self._for_account(o, snap) for o in found]
        chosen = self._text("partition")
        if chosen is not None:  # the profile's partition: its offers only (a name the cluster lacks is said so)
            if snap.partition(chosen) is None:
                raise ConfigError(f"profile {self.profile.name!r}: the cluster has no partition {chosen}",
                                  hint="its partitions: " + ", ".join(p.name for p in snap.partitions)
                                       + "; edit the profile's partition (empty: every partition)")
            found = [o for o in found if o.extra.get("partition") == chosen]
        with self._offers_lock:
            self._offers = (time.monotonic(), list(found))
        return list(found)

    def _for_account(self, offer: Offer, snap: cluster.ClusterSnapshot) -> Offer:
        """An offer of a partition the profile's account may not use stays listed, unavailable, saying why."""
        part = snap.partition(str(offer.extra.get("partition") or ""))
        account = self._text("account")
        if part is None:
            return offer
        allowed = part.allow_accounts is None or (account is not None and account in part.allow_accounts)
        if allowed and not (part.deny_accounts and account in part.deny_accounts):
            return offer
        return dataclasses.replace(offer, available=False, availability_note=(
            f"partition {part.name} takes only the accounts {', '.join(part.allow_accounts or ())}"
            if not allowed else f"partition {part.name} refuses the account {account}"))

    # -- launch ---------------------------------------------------------------------------------
    def _request(self, req: LaunchRequest, partition: str) -> batch.BatchRequest:
        spec = req.spec
        gpus = int(req.offer.gpu_count or 0)
        minutes = spec.guards.max_runtime_minutes
        return batch.BatchRequest(
            launch_id=req.launch_id, install_id=self.context.install_id, partition=partition, nodes=req.count,
            gpus_per_node=gpus, gres_type=req.offer.extra.get("gres_type") if gpus else None,
            time_limit_s=int(minutes * 60) if minutes else None, account=self._text("account"),
            qos=self._text("qos"), cpus_per_task=spec.resources.cpus,
            mem_mb=int(spec.resources.memory_gb * 1024) if spec.resources.memory_gb else None)

    @staticmethod
    def refuse(spec: JobSpec) -> None:
        """What this provider cannot do yet, said before anything is checked on the cluster."""
        if spec.image is not None:
            raise ConfigError(f"{spec.name} runs in a container image, which the Slurm provider cannot do yet",
                              hint="containers on Slurm (enroot/pyxis, apptainer) come once a runtime can be tested; "
                                   "remove image: and install what the job needs in setup")
        if spec.recovery:
            raise ConfigError(f"{spec.name} asks for spot recovery, which a Slurm cluster has no use for: it rents no "
                              f"spot machines that a cloud takes back",
                              hint="remove recovery:; a sync mount still saves the job's checkpoints to the bucket")

    def launch(self, req: LaunchRequest) -> list[Instance]:
        """Check the request against the cluster (nothing is queued), record it; the runner queues it (submit)."""
        launch_id = check_launch_id(req.launch_id)
        existing = self.records.read(launch_id)
        if existing is not None:
            return [self._instance(existing, None)]
        self.refuse(req.spec)
        rclone = mounts.check_tools(self.login, self.profile.name, self.host, self._text(mounts.RCLONE_SETTING)) \
            if req.spec.storage else None
        snap = self.snapshot(max_age_s=SNAPSHOT_REUSE_S)
        breq = self._request(req, str(req.offer.extra.get("partition") or self._text("partition") or ""))
        partition = cluster.check_request(snap, partition=breq.partition or None, gpu_type=breq.gres_type,
                                          gpus_per_node=breq.gpus_per_node, nodes=breq.nodes,
                                          time_limit_s=breq.time_limit_s, account=breq.account,
                                          cpus_per_node=breq.cpus_per_task, mem_mb_per_node=breq.mem_mb)
        breq = batch.BatchRequest(**{**breq.__dict__, "partition": partition})
        # sbatch itself decides (limits, associations, QOS): asked with the same options, nothing is queued
        test = self.login.run("sbatch --test-only " + quote_all(batch.sbatch_options(breq, "")) + " --wrap=true",
                              timeout=60)
        if test.rc != 0:
            raise queue.sbatch_error(test.err or test.out)
        rec = LaunchRecord(launch_id=launch_id, created_at=time.time(), partition=partition, nodes=breq.nodes,
                           gpus_per_node=breq.gpus_per_node, gpu_model=req.offer.gpu_model,
                           instance_type=req.offer.instance_type,
                           price_per_hour=float(req.offer.hourly(False) or 0.0) * breq.nodes,
                           currency=req.offer.prices.currency,
                           extra={"gres_type": breq.gres_type, "time_limit_s": breq.time_limit_s,
                                  "account": breq.account, "qos": breq.qos, "cpus_per_task": breq.cpus_per_task,
                                  "mem_mb": breq.mem_mb, "rclone": rclone})
        self.records.write(rec)
        return [self._instance(rec, None)]

    def batch_request(self, rec: LaunchRecord) -> batch.BatchRequest:
        x = rec.extra
        return batch.BatchRequest(launch_id=rec.launch_id, install_id=self.context.install_id,
                                  partition=rec.partition, nodes=rec.nodes, gpus_per_node=rec.gpus_per_node,
                                  gres_type=x.get("gres_type"), time_limit_s=x.get("time_limit_s"),
                                  account=x.get("account"), qos=x.get("qos"), cpus_per_task=x.get("cpus_per_task"),
                                  mem_mb=x.get("mem_mb"))

    def batch_files(self, instance: Instance, spec: JobSpec, job_dir: str,
                    files: Mapping[str, str]) -> dict[str, str]:
        rec = self.records.read(instance.launch_id)
        if rec is None:
            raise NotFoundError(f"launch {instance.launch_id} is not known to the Slurm profile {self.profile.name!r}",
                                hint="launch the job file again")
        return batch.render(self.batch_request(rec), job_dir, files, {str(k): str(v) for k, v in spec.env.items()},
                            agent_spec=spec if spec.storage else None)

    def submit(self, conn: Any, instance: Instance, job_dir: str) -> str:
        rec = self.records.read(instance.launch_id)
        if rec is not None and rec.extra.get("rclone"):  # the storage agent's config as a cluster needs it
            mounts.cluster_config(conn, job_dir, str(rec.extra["rclone"]))
        res = conn.run(f"sh {shlex.quote(job_dir + '/start.sh')}", timeout=90)
        crash_point("slurm:submitted")  # queued, not yet written down here: found again by its name and comment
        out = res.out.strip()
        if res.rc != 0:
            if "ended before its job was queued" in res.err:
                raise NotFoundError(f"{instance.launch_id} was ended before its job was queued: nothing was queued")
            raise queue.sbatch_error(res.err or out)
        m = re.search(r"queued (\d+)", out)
        if m:
            self.records.update(instance.launch_id, batch_id=m.group(1))
        return out

    # -- state ------------------------------------------------------------------------------------
    def _listing_command(self, recs: Sequence[LaunchRecord]) -> str:
        """One round trip: our jobs in the queue, then per launch not yet ended the ``batch_id`` and ``exit_code``
        of its job folder and ``scontrol show job`` (how it ended: Slurm keeps an ended job a while, ``MinJobAge``)
        — only when the queue does not list its job as waiting or running: a live job costs no extra process."""
        live = "|".join(f'*"$NL$id{queue.SEP}{state}{queue.SEP}"*' for state in sorted(LIVE))
        lines = ["NL='\n'", f"Q=$({queue.squeue_command(batch.comment(self.context.install_id, ''))})",
                 'printf "%s\\n" "$Q"', "echo @@WB-RECORDS", f"B={BASE_EXPR}"]
        for rec in recs:
            if rec.ended:
                continue
            j = f'"$B/jobs/{rec.launch_id}"'
            jid = rec.batch_id or f"$(cat {j}/batch_id 2>/dev/null)"
            lines += [f"id={jid}",
                      f'case "$NL$Q" in {live}) echo "@@WB-REC {rec.launch_id} $id" ;;',
                      f'  *) echo "@@WB-REC {rec.launch_id} $(cat {j}/batch_id 2>/dev/null) '
                      f'$(cat {j}/exit_code 2>/dev/null)"',
                      f'     [ -n "$id" ] && {SLURM_ENV} scontrol show job -o "$id" 2>/dev/null | grep "^JobId=" ;;',
                      "esac"]
        return "\n".join(lines) + "\ntrue\n"

    def instances(self) -> list[Instance]:
        recs = self.records.all()
        out = self.login.check(self._listing_command(recs), "reading the queue", timeout=60)
        queued_text, _, rec_text = out.partition("@@WB-RECORDS")
        mine: dict[str, Any] = {}
        for job in queue.parse_squeue(queued_text):
            owner = batch.parse_comment(job.comment)
            if owner is not None and owner[0] == self.context.install_id:
                mine[owner[1]] = job
        seen: dict[str, tuple[str | None, int | None, Any]] = {}
        current: str | None = None
        for line in rec_text.splitlines():
            if line.startswith("@@WB-REC "):
                parts = line.split()
                current = parts[1]
                bid = parts[2] if len(parts) > 2 else None
                code = int(parts[3]) if len(parts) > 3 and re.fullmatch(r"-?\d+", parts[3]) else None
                seen[current] = (bid, code, None)
            elif current and line.startswith("JobId="):
                bid, code, _ = seen[current]
                seen[current] = (bid, code, queue.parse_job(line))
        found = []
        by_id = {r.launch_id: r for r in recs}
        for rec in recs:
            found.append(self._instance(self._refresh(rec, mine.get(rec.launch_id), seen.get(rec.launch_id)),
                                        mine.get(rec.launch_id)))
        for lid, job in mine.items():  # queued by this install but unknown here: found again by its comment
            if lid not in by_id:
                found.append(self._orphan(lid, job))
        return found

    def _refresh(self, rec: LaunchRecord, queued: Any, seen: tuple[str | None, int | None, Any] | None) -> LaunchRecord:
        """The record with what the cluster says now; an end seen once is written down (Slurm forgets it)."""
        if rec.ended:
            return rec
        bid, code, job = seen or (None, None, None)
        bid = (queued.job_id if queued is not None else None) or bid or rec.batch_id
        if queued is not None and queued.state not in ENDED:
            return self.records.update(rec.launch_id, batch_id=bid) or rec if bid != rec.batch_id else rec
        state = job.state if job is not None else (queued.state if queued is not None else None)
        if state in ENDED or (bid and job is None and queued is None):
            exit_code = code if code is not None else (job.exit_code if job is not None else None)
            return self.records.update(rec.launch_id, batch_id=bid, end_state=state or "ENDED",
                                       exit_code=exit_code, ended_at=time.time()) or rec
        if bid and bid != rec.batch_id:
            return self.records.update(rec.launch_id, batch_id=bid) or rec
        return rec

    def _base(self, rec: LaunchRecord) -> dict[str, Any]:
        return dict(provider=self.id, profile=self.profile.name, instance_id=batch.job_name(rec.launch_id),
                    launch_id=rec.launch_id, region=self.cluster_name, instance_type=rec.instance_type,
                    name=batch.job_name(rec.launch_id), gpu_model=rec.gpu_model,
                    gpu_count=rec.gpus_per_node * rec.nodes, price_per_hour=rec.price_per_hour,
                    currency=rec.currency, host=self.host)

    def _extra(self, **more: Any) -> dict[str, Any]:
        return {"ssh_user": self.user, "ssh_port": self.port, "host_keys": self.login.host_keys(),
                "cluster": self.cluster_name, **({} if is_default(self.ssh) else {"ssh_login": "profile"}),
                **{k: v for k, v in more.items() if v is not None}}

    def _instance(self, rec: LaunchRecord, queued: Any) -> Instance:
        common = dict(partition=rec.partition, nodes=rec.nodes, gpus_per_node=rec.gpus_per_node,
                      slurm_job_id=rec.batch_id)
        if rec.ended:
            return Instance(**self._base(rec), state=InstanceState.TERMINATED, launched_at=rec.created_at,
                            exit_code=rec.exit_code, extra=self._extra(**common, slurm_state=rec.end_state))
        if queued is not None:
            state = queue.state_of(queued.state)
            pending = state == InstanceState.PENDING
            # launched_at = when Slurm started it (runtime and cost count from there), None while it waits
            return Instance(**self._base(rec), state=state,
                            launched_at=queued.start_estimate if state == InstanceState.RUNNING else None,
                            extra=self._extra(**common, slurm_state=queued.state, node_list=",".join(queued.node_list) or None,
                                              queue_reason=queued.reason if pending else None,
                                              queue_start=queued.start_estimate if pending else None))
        fresh = time.time() - rec.created_at < SUBMIT_WINDOW_S
        return Instance(**self._base(rec), state=InstanceState.RUNNING if fresh else InstanceState.TERMINATED,
                        launched_at=rec.created_at,
                        extra=self._extra(**common, slurm_state="SUBMITTING" if fresh else "NEVER_QUEUED"))

    def _orphan(self, launch_id: str, job: Any) -> Instance:
        state = queue.state_of(job.state)
        return Instance(provider=self.id, profile=self.profile.name, instance_id=batch.job_name(launch_id),
                        launch_id=launch_id, region=self.cluster_name, instance_type="slurm", state=state, name=batch.job_name(launch_id),
                        host=self.host,
                        extra=self._extra(slurm_job_id=job.job_id, slurm_state=job.state, node_list=",".join(job.node_list),
                                          queue_reason=job.reason if state == InstanceState.PENDING else None))

    # -- ending -----------------------------------------------------------------------------------
    def terminate(self, instances: Sequence[Instance]) -> None:
        """``scancel`` the launches' jobs (the user's own, by name), verified gone from the queue; a launch whose job
        was not queued yet is marked so that it never is (``submit.sh`` refuses)."""
        launches = sorted({i.launch_id for i in instances if i.provider == self.id})
        if not launches:
            return
        names = ",".join(batch.job_name(lid) for lid in launches)
        marks = " ".join(f'"$B/jobs/{lid}"' for lid in launches)
        script = (f"B={BASE_EXPR}; for J in {marks}; do mkdir -p \"$J\" && touch \"$J/{batch.CANCELLED_FILE}\"; done; "
                  f"scancel -u \"$(id -un)\" --name={shlex.quote(names)}")
        self.login.check(script, "cancelling the jobs", timeout=60)
        deadline = time.monotonic() + CANCEL_WAIT_S
        wanted = {batch.job_name(lid) for lid in launches}
        while True:
            left = [j for j in queue.parse_squeue(self.login.check(queue.squeue_command(""), "reading the queue"))
                    if j.name in wanted and j.state not in ENDED]
            if not left:
                break
            if time.monotonic() > deadline:
                raise WorkbenchError(f"{len(left)} job(s) are still in the queue {CANCEL_WAIT_S:.0f} s after scancel: "
                                     + ", ".join(f"{j.job_id} ({j.state})" for j in left),
                                     hint="run `squeue --me` on the login node")
            time.sleep(1.0)
        stored = [lid for lid in launches if (rec := self.records.read(lid)) is not None and rec.extra.get("rclone")]
        if stored:  # a job cancelled before it ran keeps no storage credentials in its folder
            self.login.run(f"B={BASE_EXPR}; " + "; ".join(mounts.forget_credentials(f'"$B/jobs/{lid}"')
                                                           for lid in stored), timeout=30)
        for lid in launches:
            rec = self.records.read(lid)
            if rec is not None and not rec.ended:
                self.records.update(lid, end_state="CANCELLED", ended_at=time.time())

    def leftovers(self) -> list[Resource]:
        return []  # a batch job leaves nothing that bills

    def delete(self, resources: Sequence[Resource]) -> None:
        return None

    # -- telemetry --------------------------------------------------------------------------------
    def gpu_readings(self, instance: Instance) -> list[Reading]:
        """One round of the job's GPUs on every node (``srun --overlap`` inside the job's allocation)."""
        jid = instance.extra.get("slurm_job_id")
        if instance.state != InstanceState.RUNNING or not jid or not instance.gpu_count:
            return []
        nodes = int(instance.extra.get("nodes") or 1)
        per_node = int(instance.extra.get("gpus_per_node") or instance.gpu_count)
        cmd = (f"timeout 30 srun --jobid={shlex.quote(str(jid))} --overlap --nodes={nodes} --ntasks={nodes} "
               f"--ntasks-per-node=1 --label nvidia-smi --query-gpu={','.join(QUERY_FIELDS)} "
               f"--format=csv,noheader,nounits")
        res = self.login.run(cmd, timeout=45)
        out = []
        for line in res.out.splitlines():
            label, _, rest = line.partition(":")
            got = parse_line(rest) if label.strip().isdigit() else None
            if isinstance(got, Reading):
                out.append(dataclasses.replace(got, index=int(label) * per_node + got.index))
        if not out and res.rc != 0:
            raise WorkbenchError(f"cannot read the GPUs of job {jid}: {(res.err or res.out).strip()[:200]}")
        return out

    def samples(self, instance: Instance) -> list[GpuSample]:
        """:meth:`gpu_readings` as samples (``workbench`` commands that read telemetry without the app's hub)."""
        now = time.time()
        return [GpuSample(instance.instance_id, now, r.index, r.util, r.mem_used, r.mem_total, r.name,
                          power_w=r.power, power_limit_w=r.power_limit, sm_clock_mhz=r.sm_clock,
                          mem_util_percent=r.mem_util) for r in self.gpu_readings(instance)]
