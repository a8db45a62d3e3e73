"""Read a dstack task configuration (``type: task`` in a ``.dstack.yml``) into our job spec.

Field by field (docs/importers.md has the table): ``name``, ``nodes``, ``commands`` (joined with
``&&`` as dstack runs them), ``env`` (``K=V``, or a bare ``K`` asked for at launch), ``resources``
(``gpu`` as "H100:1..2", "24GB..40GB:2", "A100:8", a mapping; ``cpu``, ``memory``, ``disk``),
``spot_policy``, ``retry``, ``max_duration``, ``max_price``, ``utilization_policy``, ``regions``,
``backends``, ``instance_types``, ``files``, ``repos`` (a local folder), ``working_dir``, ``image``
with ``registry_auth``, ``user`` and ``resources.shm_size``, and ``ports`` (module ``container``).  A
GPU count or memory without a range is exact, as in dstack.  Settings of fleets are ignored with a
reason; ``docker: true``, ``entrypoint``, volumes, services and dev environments are refused.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from workbench.core.domain.importers.base import KIND_DSTACK, ImportReader, ImportResult
from workbench.core.domain.importers.container import ContainerFields
from workbench.core.domain.importers.dstack_resources import DstackResources
from workbench.core.domain.models import (CHOOSE_CHEAPEST, Alternative, Guards, JobSpec, Recovery, Resources,
                                          StorageMode, StorageMount, with_default_idle_guard)

RUN_TYPES = ("task", "service", "dev-environment")
TASK_KEYS = (
    "type", "name", "nodes", "commands", "setup", "env", "resources", "python", "nvcc", "image", "docker",
    "privileged", "registry_auth", "entrypoint", "user", "shell", "home_dir", "ports", "volumes", "repos", "files",
    "working_dir", "single_branch", "spot_policy", "retry", "retry_policy", "max_duration", "stop_duration",
    "max_price", "idle_duration", "utilization_policy", "regions", "availability_zones", "backends",
    "instance_types", "reservation", "creation_policy", "termination_policy", "termination_idle_time", "pool_name",
    "instance_name", "fleets", "tags", "priority", "schedule", "startup_order", "stop_criteria")
MAX_NODES = 64
_REFUSED = {
    "docker": "Docker inside the job (docker: true) is not set up here: give the job's own image with `image:`",
    "entrypoint": "the image's entrypoint cannot be replaced here: the commands run with the container's shell",
    "volumes": "dstack volumes cannot be attached here: copy data in with `files` or from a bucket",
    "schedule": "scheduled (cron) runs cannot be set up yet",
}
_IGNORED = {
    "python": "no container here: the machine's own Python is used (install another in the commands if needed)",
    "nvcc": "no container here: the provider's GPU image decides whether nvcc is installed",
    "privileged": "privileged containers are not set up here",
    "home_dir": "no container here: the machine user's home is used",
    "shell": "commands run in bash where installed, else sh",
    "single_branch": "no git checkout here: a local repo folder is uploaded as it is",
    "stop_duration": "stopping ends the job's processes at once (SIGTERM, then SIGKILL after a grace period)",
    "idle_duration": "here the machine ends when the job ends (on_finish: terminate); no idle pool",
    "availability_zones": "the zone is chosen by the provider plugin",
    "reservation": "capacity reservations are not used: the launch takes the cheapest offer",
    "creation_policy": "every launch starts its own machines here (no fleets to reuse)",
    "termination_policy": "here the machine ends when the job ends (on_finish: terminate)",
    "termination_idle_time": "here the machine ends when the job ends (on_finish: terminate)",
    "pool_name": "no instance pools here", "instance_name": "no instance pools here",
    "fleets": "no fleets here: each launch starts its own machines", "tags": "this app tags every resource itself",
    "priority": "launches start at once here (no queue)",
}
WORKFLOW = "/workflow"  # dstack's default working folder in its container: the job's folder here
_SECRET_REF = re.compile(r"\$\{\{\s*secrets\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_TEMPLATE = re.compile(r"\$\{\{.*?\}\}")
_RUN_ARGS = re.compile(r"\s*\$\{\{\s*run\.args\s*\}\}")


def import_dstack(root: MappingNode, source: str, base_dir: Path | None) -> ImportResult:
    """Map the composed document ``root`` (a mapping with ``type``) of the dstack file at ``source``."""
    return _Dstack(source, base_dir).configuration(root)


class _Dstack(DstackResources, ContainerFields, ImportReader):
    kind = KIND_DSTACK

    def configuration(self, root: MappingNode) -> ImportResult:
        raw = self.mapping(root, "", None)
        type_node = raw["type"][1]
        kind = self.string(type_node, "type").strip()
        if kind != "task":
            what = {"service": "a dstack service (replicas behind an endpoint) cannot run here yet: only tasks "
                               "that run to an end",
                    "dev-environment": "a dstack dev environment (an IDE on the machine) cannot run here yet: "
                                       "only tasks"}.get(kind, f"a dstack '{kind}' configuration is not a run: "
                                                               "only `type: task` runs here")
            self.refused(type_node, "type", what)
            return self.result(lambda: None)
        f = self.mapping(root, "", TASK_KEYS)

        def opt(key: str) -> Node | None:
            node = f[key][1] if key in f else None
            return None if node is None or self.is_null(node) else node

        for key, why in _REFUSED.items():
            if key == "docker" and key in f and not self.boolean(f[key][1], key):
                self.ignored(f[key][0], key, "false: nothing to set up")
            elif key in f:
                self.refused(f[key][0], key, why)
        for key, why in _IGNORED.items():
            if key in f:
                self.ignored(f[key][0], key, why)
        for key in ("startup_order", "stop_criteria"):
            if (n := opt(key)) is not None:
                value = self.string(n, key).strip()
                why = ("here `run` starts on every node once every node has finished `setup`"
                       if key == "startup_order" else
                       "here the job ends with node 0 (master-done); another node failing fails the launch")
                self.ignored(f[key][0], key, f"{value}: {why}")
        name_node = opt("name")
        name = self.job_name(name_node, self.text(name_node, "name") if name_node else None)
        num_nodes = 1
        if (n := opt("nodes")) is not None:
            num_nodes = self.integer(n, "nodes", 1, MAX_NODES)
            self.mapped(n, "nodes", f"num_nodes: {num_nodes}", "num_nodes")
        env, secrets = self.env(opt("env"))
        workdir, cd = self.repos(opt("repos")), self.working_dir(opt("working_dir"))
        if "image" in f and opt("commands") is None:
            self.refused(f["image"][0], "commands", "without commands dstack runs the image's own command: here "
                                                    "give it in `commands`")
        run = self.commands(opt("commands"), "commands", root, cd, required="image" not in f)
        setup = self.commands(opt("setup"), "setup", root, cd, required=False)
        storage = self.files(opt("files"))
        resources, alternatives = self.resources_block(opt("resources"))
        image, secrets = self.dstack_image(f, env, secrets, self.shm)
        ports = self.dstack_ports(f["ports"][0], n) if (n := opt("ports")) is not None else ()
        ports = self.name_ports("ports", ports, setup, run)
        spot, spot_choices = self.spot_policy(opt("spot_policy"))
        alternatives = self.with_spot(alternatives, spot_choices)
        providers = self.backends(opt("backends"))
        regions = tuple(self.strings(n, "regions")) if (n := opt("regions")) is not None else ()
        if regions:
            self.mapped(f["regions"][0], "regions", "regions: " + ", ".join(regions), "regions")
        alternatives = self.instance_types(opt("instance_types"), alternatives)
        max_price = self.number(n, "max_price") if (n := opt("max_price")) is not None else None
        if max_price is not None:
            self.mapped(f["max_price"][0], "max_price", f"resources.max_price: {max_price:g} per hour", "resources")
        recovery = self.retry(opt("retry"), opt("retry_policy"))
        guards = self.guards(opt("max_duration"), opt("utilization_policy"))

        def build() -> JobSpec:
            res = Resources(**{**resources, "spot": spot, "max_price": max_price})
            return with_default_idle_guard(JobSpec(
                name=name, run=run or "", setup=setup, resources=res, env=env, workdir=workdir, guards=guards,
                providers=providers, regions=regions, source=self.source, num_nodes=num_nodes, storage=storage,
                recovery=recovery, secrets=secrets, alternatives=alternatives, choose=CHOOSE_CHEAPEST,
                image=image, ports=ports),
                idle_given=(guards.idle_minutes, guards.idle_util_below) != (Guards().idle_minutes,
                                                                             Guards().idle_util_below))

        return self.result(build)

    # -- fields ------------------------------------------------------------------
    def env(self, node: Node | None) -> tuple[dict[str, str], tuple[str, ...]]:
        env: dict[str, str] = {}
        asked: list[str] = []
        if node is None:
            return env, ()
        if isinstance(node, SequenceNode):
            items = []
            for item in node.value:
                text = self.text(item, "env")
                key, eq, value = text.partition("=")
                items.append((item, key.strip(), value if eq else None))
        else:
            items = []
            for key, (key_node, value) in self.mapping(node, "env", None).items():
                items.append((key_node, key, None if self.is_null(value) else self.text(value, f"env.{key}")))
        for item_node, key, value in items:
            path = f"env.{key}"
            self.env_name(item_node, path, key)
            if key in env or key in asked:
                self.fail(item_node, path, f"{key} is set twice")
            secret = _SECRET_REF.fullmatch(value.strip()) if value is not None else None
            if value is None or secret:
                asked.append(key)
                origin = f"dstack secret {secret.group(1)}" if secret else "no value in the file"
                self.mapped(item_node, path, f"{key}: {origin} — asked for at launch (--env/--secret-env or a "
                                             "prompt), never stored", "secrets")
                continue
            if _TEMPLATE.search(value):
                self.refused(item_node, path, f"'{value}': dstack's ${{{{ … }}}} templates cannot be filled in here")
                continue
            env[key] = value
            self.mapped(item_node, path, f"env {key}", "env")
        return env, tuple(asked)

    def commands(self, node: Node | None, path: str, root: Node, cd: str | None, required: bool) -> str | None:
        if node is None:
            if required:
                self.fail(root, path, "required: the commands that run the job")
            return None
        items = node.value if isinstance(node, SequenceNode) else [node]
        target = "run" if path == "commands" else "setup"
        lines: list[str] = []
        for i, item in enumerate(items):
            item_path = f"{path}[{i}]" if isinstance(node, SequenceNode) else path
            text = self.string(item, item_path).strip()
            if not text:
                continue
            if _RUN_ARGS.search(text):
                text = _RUN_ARGS.sub("", text).rstrip()
                self.mapped(item, f"{item_path} (${{{{ run.args }}}})", "left empty: dstack fills it with the "
                            "arguments given to `dstack apply`, none in a run without them", target)
            if _TEMPLATE.search(text):
                self.refused(item, item_path, "dstack's ${{ … }} templates cannot be filled in here")
            lines.append(f"{{ {text} }}" if text.endswith("&") else text)  # as dstack runs a background command
        if not lines:
            if required:
                self.fail(node, path, "must not be empty: give the commands that run the job")
            return None
        if cd:
            lines.insert(0, f"cd {cd}")
        note = (" — note: they name /workflow, dstack's working folder; here that is the job's folder, where "
                "they start" if any(WORKFLOW in line for line in lines) else "")
        self.mapped(node, path, f"{target}: {len(lines)} command(s) joined with && (stops at the first failure, "
                                "as dstack runs them)" + (f", starting in {cd}" if cd else "") + note, target)
        return " &&\n".join(lines)

    def working_dir(self, node: Node | None) -> str | None:
        if node is None:
            return None
        text = self.string(node, "working_dir").strip()
        text = _under_workflow(text)
        if text.startswith(("/", "~")):
            self.ignored(node, "working_dir", "an absolute folder in dstack's container; here commands start in the "
                                              "job's folder (the uploaded repo)")
            return None
        clean = str(PurePosixPath(text))
        if ".." in PurePosixPath(clean).parts:
            self.fail(node, "working_dir", f"must not contain '..', got '{text}'")
        self.mapped(node, "working_dir", f"commands start with `cd {clean}` (relative to the uploaded repo)", "run")
        return clean if clean != "." else None

    def repos(self, node: Node | None) -> str | None:
        if node is None:
            return None
        items = node.value if isinstance(node, SequenceNode) else [node]
        if len(items) > 1:
            self.fail(items[1], "repos", "dstack allows one repo per run")
        if not items:
            return None
        item = items[0]
        if isinstance(item, MappingNode):
            f = self.mapping(item, "repos[0]", None)
            if "local_path" not in f:
                self.refused(item, "repos[0]", "only a local folder can be uploaded here: clone a remote repo in "
                                               "the commands")
                return None
            text = self.string(f["local_path"][1], "repos[0].local_path").strip()
        else:
            text = self.string(item, "repos[0]").strip()
        if "://" in text or text.startswith("git@"):
            self.refused(item, "repos[0]", f"'{text}': a remote repo cannot be fetched yet: clone it in the commands")
            return None
        local, _, remote = text.partition(":")
        folder = self.local_dir(item, "repos[0]", local)
        if folder is None:
            self.fail(item, "repos[0]", f"'{local}' is a file, not a folder")
        more = f" (dstack's path {remote} is not used: commands start in it)" if remote else ""
        self.mapped(item, "repos", f"workdir: {folder} (uploaded; commands start in it){more}", "workdir")
        return str(folder)

    def files(self, node: Node | None) -> tuple[StorageMount, ...]:
        if node is None:
            return ()
        items = node.value if isinstance(node, SequenceNode) else [node]
        mounts: list[StorageMount] = []
        for i, item in enumerate(items):
            path = f"files[{i}]"
            if isinstance(item, MappingNode):
                f = self.mapping(item, path, ("local_path", "path"))
                local = self.string(f["local_path"][1], f"{path}.local_path").strip()
                remote = self.string(f["path"][1], f"{path}.path").strip() if "path" in f else ""
            else:
                local, _, remote = self.string(item, path).strip().partition(":")
            folder = self.local_dir(item, path, local)
            if folder is None:
                self.refused(item, path, f"'{local}' is a single file: only folders are uploaded here — put it in "
                                         "the repo folder or give its folder")
                continue
            dest = _under_workflow(remote) if remote else (local if not local.startswith(("/", "~")) else folder.name)
            dest = dest.rstrip("/") or "/"
            if dest.startswith("~") or ".." in PurePosixPath(dest).parts:
                self.refused(item, path, f"'{dest}': give an absolute path or one relative to the job's folder")
                continue
            dest = str(PurePosixPath(dest))
            if any(m.path == dest for m in mounts):
                self.fail(item, path, f"'{dest}' is mounted twice")
            mounts.append(StorageMount(dest, str(folder), StorageMode.COPY))
            self.mapped(item, path, f"storage: {dest} ← {folder} (uploaded before the commands)", "storage")
        return tuple(mounts)

    def spot_policy(self, node: Node | None) -> tuple[bool, bool]:
        """(spot, try both): ``auto`` becomes two alternatives, spot and on-demand, the cheaper wins."""
        if node is None:
            return False, False
        text = self.string(node, "spot_policy").strip().lower()
        if text not in ("spot", "on-demand", "auto"):
            self.fail(node, "spot_policy", f"must be spot, on-demand or auto, got '{text}'")
        detail = {"spot": "resources.spot: true", "on-demand": "resources.spot: false",
                  "auto": "spot or on-demand, whichever is cheaper (two alternatives)"}[text]
        self.mapped(node, "spot_policy", detail, "alternatives" if text == "auto" else "resources")
        return text == "spot", text == "auto"

    def with_spot(self, alts: tuple[Alternative, ...], both: bool) -> tuple[Alternative, ...]:
        if not both:
            return alts
        base = alts or (Alternative(),)
        return tuple(Alternative(a.gpu, a.provider, a.region, a.instance_type, spot) for spot in (True, False)
                     for a in base)

    def backends(self, node: Node | None) -> tuple[str, ...]:
        if node is None:
            return ()
        names = self.strings(node, "backends")
        ours = [p for n in names if (p := self.provider(n))]
        others = [n for n in names if not self.provider(n)]
        if ours:
            self.mapped(node, "backends", "providers: " + ", ".join(dict.fromkeys(ours)), "providers")
        if others:
            self.ignored(node, "backends", f"{', '.join(others)}: not a cloud this app rents from"
                         + ("" if ours else " — the job may run on any configured cloud"))
        return tuple(dict.fromkeys(ours))

    def instance_types(self, node: Node | None, alts: tuple[Alternative, ...]) -> tuple[Alternative, ...]:
        if node is None:
            return alts
        types = self.strings(node, "instance_types")
        self.mapped(node, "instance_types", "instance types: " + ", ".join(types), "alternatives")
        base = alts or (Alternative(),)
        return tuple(Alternative(a.gpu, a.provider, a.region, t, a.spot) for t in types for a in base)

    def retry(self, node: Node | None, old: Node | None) -> Recovery | None:
        if node is None and old is not None:
            f = self.mapping(old, "retry_policy", ("retry", "duration"))
            on = "retry" not in f or self.boolean(f["retry"][1], "retry_policy.retry")
            if "duration" in f:
                self.ignored(f["duration"][0], "retry_policy.duration", "here recovery counts restarts (3), not time")
            rec = Recovery(3, ("preemption", "failure")) if on else None
            self.mapped(old, "retry_policy", f"recovery: {'preemption, failure, 3 restarts' if rec else 'off'}",
                        "recovery")
            return rec
        if node is None:
            return None
        if isinstance(node, ScalarNode):
            on = self.boolean(node, "retry")
            self.mapped(node, "retry", "recovery: after preemption or failure, at most 3 times" if on
                        else "recovery: off", "recovery")
            return Recovery(3, ("preemption", "failure")) if on else None
        f = self.mapping(node, "retry", ("on_events", "duration"))
        events = self.strings(f["on_events"][1], "retry.on_events") if "on_events" in f else \
            ["no-capacity", "interruption", "error"]
        on: list[str] = []
        for event in events:
            if event not in ("no-capacity", "interruption", "error"):
                self.fail(f["on_events"][1], "retry.on_events", f"'{event}' is not an event: no-capacity, "
                                                                "interruption or error")
            if event == "interruption":
                on.append("preemption")
            elif event == "error":
                on.append("failure")
        if "no-capacity" in events:
            self.ignored(f.get("on_events", (node,))[0], "retry.on_events: no-capacity",
                         "a launch without capacity fails at once here: try another region or provider")
        if "duration" in f:
            self.ignored(f["duration"][0], "retry.duration", "here recovery counts restarts (3), not time")
        if not on:
            return None
        self.mapped(node, "retry", f"recovery: after {' or '.join(on)}, at most 3 times", "recovery")
        return Recovery(3, tuple(on))

    def guards(self, max_duration: Node | None, utilization: Node | None) -> Guards:
        kw: dict[str, Any] = {}
        if max_duration is not None:
            value = self.scalar(max_duration, "max_duration", "a duration or off")
            if value is False or (isinstance(value, str) and value.strip().lower() == "off"):
                self.ignored(max_duration, "max_duration: off", "a runtime limit always applies here so a forgotten "
                                                                "job cannot bill forever: the default 24h")
            elif value is not True:
                secs = self.dstack_seconds(max_duration, "max_duration", value)
                kw["max_runtime_minutes"] = max(1, -(-secs // 60))
                self.mapped(max_duration, "max_duration", f"guards.max_runtime: {kw['max_runtime_minutes']} min",
                            "guards")
        if utilization is not None:
            f = self.mapping(utilization, "utilization_policy", ("min_gpu_utilization", "time_window"))
            for key in ("min_gpu_utilization", "time_window"):
                if key not in f:
                    self.fail(utilization, f"utilization_policy.{key}", "required field is missing")
            below = self.integer(f["min_gpu_utilization"][1], "utilization_policy.min_gpu_utilization", 0, 100)
            secs = self.dstack_seconds(f["time_window"][1], "utilization_policy.time_window",
                                       self.scalar(f["time_window"][1], "utilization_policy.time_window", "a duration"))
            if below == 0:
                self.ignored(utilization, "utilization_policy", "a minimum of 0% never ends a job")
                return Guards(**kw)
            kw["idle_util_below"] = float(below)
            kw["idle_minutes"] = max(1, -(-secs // 60))
            self.mapped(utilization, "utilization_policy", f"guards: idle below {below}% for {kw['idle_minutes']} "
                                                           "min ends the job", "guards")
        return Guards(**kw)


def _under_workflow(path: str) -> str:
    """'/workflow/data' → 'data': dstack's working folder is the job's folder here."""
    if path == WORKFLOW:
        return "."
    return path[len(WORKFLOW) + 1:] if path.startswith(WORKFLOW + "/") else path
