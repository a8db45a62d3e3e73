"""Read a SkyPilot task YAML (``sky launch task.yaml``) into our job spec.

Field by field (docs/importers.md has the table): ``name``, ``workdir`` (a local folder),
``num_nodes``, ``envs`` (a value-less variable is asked for at launch), ``secrets`` (asked for at
launch, never stored), ``file_mounts`` (local folders and S3/Azure/OSS buckets become storage
mounts), ``setup``, ``run``, and ``resources``: ``accelerators`` (one, or a list/set of choices),
``cpus``/``memory`` ("4+" = at least), ``disk_size``, ``use_spot``, ``instance_type``, ``infra``
and the older ``cloud``/``region``/``zone``, ``any_of``/``ordered`` (our ``alternatives``),
``max_hourly_cost``, ``autostop``, ``job_recovery``/``spot_recovery``, ``image_id: docker:…`` (with
SkyPilot's docker login variables in ``envs``) and ``ports`` (module ``container``).  GPU counts are
exact, as in SkyPilot; without ``disk_size`` the disk is SkyPilot's default 256 GB.  Machine images,
Kubernetes and services are refused.

Unlike SkyPilot, relative local paths are read from the task file's folder, not the shell's.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from workbench.core.domain.importers.base import KIND_SKYPILOT, ImportReader, ImportResult
from workbench.core.domain.importers.container import DOCKER_PASSWORD
from workbench.core.domain.importers.sky_resources import SkyResources
from workbench.core.domain.models import Guards, JobSpec, StorageMode, StorageMount, with_default_idle_guard
from workbench.core.domain.yaml_reader import did_you_mean

TOP_KEYS = ("name", "workdir", "num_nodes", "resources", "envs", "secrets", "file_mounts", "setup", "run",
            "service", "config", "experimental", "event_callback", "inputs", "outputs", "volumes", "pool")
MAX_NODES = 64
DEFAULT_DISK_GB = 256  # SkyPilot's disk when disk_size is not given
_MOUNT_KEYS = ("name", "source", "store", "mode", "persistent", "config", "_force_delete", "_bucket_sub_path")
_MODES = {"COPY": StorageMode.COPY, "MOUNT": StorageMode.SYNC, "MOUNT_CACHED": StorageMode.SYNC}
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def import_skypilot(root: MappingNode, source: str, base_dir: Path | None) -> ImportResult:
    """Map the composed document ``root`` (a mapping) of the SkyPilot task at ``source``."""
    return _Sky(source, base_dir).task(root)


class _Sky(SkyResources, ImportReader):
    kind = KIND_SKYPILOT

    def task(self, root: MappingNode) -> ImportResult:
        f = self.mapping(root, "", TOP_KEYS)

        def opt(key: str) -> Node | None:
            node = f[key][1] if key in f else None
            return None if node is None or self.is_null(node) else node

        for key in ("service", "volumes", "pool"):
            if key in f:
                self.refused(f[key][0], key, {
                    "service": "a SkyServe service (replicas behind an endpoint) cannot run here yet: "
                               "only jobs that run to an end",
                    "volumes": "network volumes cannot be attached yet",
                    "pool": "worker pools cannot run here yet"}[key])
        for key, why in (("config", "SkyPilot's advanced settings (docker, kubernetes, per-cloud) do not apply here"),
                         ("experimental", "SkyPilot's experimental settings do not apply here"),
                         ("event_callback", "no event callback here: follow the job with `workbench logs`"),
                         ("inputs", "a size hint for SkyPilot's optimizer"),
                         ("outputs", "a size hint for SkyPilot's optimizer (our `outputs` downloads "
                                     "folders when the job ends)")):
            if key in f:
                self.ignored(f[key][0], key, why)

        name_node = opt("name")
        name = self.job_name(name_node, self.text(name_node, "name") if name_node else None)
        run_node = opt("run")
        if run_node is None:
            self.fail(root, "run", "required here: SkyPilot allows a task without `run` (it only starts "
                                   "machines), a job here needs the command that does the work")
        run = self.string(run_node, "run")
        if not run.strip():
            self.fail(run_node, "run", "must not be empty: give the command that runs the job")
        self.mapped(run_node, "run", "run (on every node)" + _workdir_note(run), "run")
        setup = None
        if (n := opt("setup")) is not None:
            setup = self.string(n, "setup").strip("\n") or None
            self.mapped(n, "setup", "setup (on every node, before run)" + _workdir_note(setup or ""), "setup")

        num_nodes = 1
        if (n := opt("num_nodes")) is not None:
            num_nodes = self.integer(n, "num_nodes", 1, MAX_NODES)
            self.mapped(n, "num_nodes", f"num_nodes: {num_nodes}", "num_nodes")
        workdir = self.workdir(opt("workdir"))
        env, asked = self.envs(opt("envs"))
        secrets = self.secrets(opt("secrets"), env, asked)
        res = self.resources_block(opt("resources"))
        if not any(n.field == "resources.disk_size" for n in self.notes):
            res.resources = dataclasses.replace(res.resources, disk_gb=DEFAULT_DISK_GB)
            self.mapped(opt("resources") or root, "resources.disk_size", f"not given: SkyPilot's default "
                        f"{DEFAULT_DISK_GB} GB → resources.disk_gb: {DEFAULT_DISK_GB}", "resources")
        image = None
        if res.image_node is not None and res.image_ref is not None:
            image, secrets = self.sky_image(res.image_node, res.image_ref, env, secrets, DOCKER_PASSWORD in env)
        storage = self.file_mounts(opt("file_mounts"), env, res.providers)
        ports = self.name_ports("resources.ports", res.ports, setup, run)

        def build() -> JobSpec:
            guards = Guards() if res.idle_minutes is ... else dataclasses.replace(Guards(), idle_minutes=res.idle_minutes)
            return with_default_idle_guard(JobSpec(
                name=name, run=run, setup=setup, resources=res.resources, env=env, workdir=workdir, guards=guards,
                providers=res.providers, regions=res.regions, source=self.source, num_nodes=num_nodes,
                storage=storage, recovery=res.recovery, secrets=secrets, alternatives=res.alternatives,
                choose=res.choose, image=image, ports=ports), idle_given=res.idle_minutes is not ...)

        return self.result(build)

    # -- top-level fields -----------------------------------------------------
    def workdir(self, node: Node | None) -> str | None:
        if node is None:
            return None
        if isinstance(node, MappingNode):
            self.refused(node, "workdir", "a git repository as workdir cannot be fetched yet: clone it in "
                                          "`setup`, or give a local folder")
            return None
        text = self.string(node, "workdir").strip()
        folder = self.local_dir(node, "workdir", text)
        if folder is None:
            self.fail(node, "workdir", f"'{text}' is a file, not a folder")
        self.mapped(node, "workdir", f"workdir: {folder} (uploaded; the job starts in it)", "workdir")
        return str(folder)

    def envs(self, node: Node | None) -> tuple[dict[str, str], list[str]]:
        """``envs``: values as written; a variable without a value must be given at launch."""
        env: dict[str, str] = {}
        asked: list[str] = []
        if node is None:
            return env, asked
        for key, (key_node, value) in self.mapping(node, "envs", None).items():
            path = f"envs.{key}"
            self.env_name(key_node, path, key)
            if self.is_null(value):
                asked.append(key)
                self.mapped(key_node, path, f"{key}: no value in the file — asked for at launch "
                                            "(--env/--secret-env or a prompt), not stored", "secrets")
                continue
            if not isinstance(value, ScalarNode):
                self.fail(value, path, f"must be a string or number, got {self.describe(value)}")
            self.scalar(value, path, "a string or number")
            env[key] = value.value
            self.mapped(key_node, path, f"env {key}", "env")
        return env, asked

    def secrets(self, node: Node | None, env: dict[str, str], asked: list[str]) -> tuple[str, ...]:
        names = list(asked)
        if node is None:
            return tuple(names)
        items = self.mapping(node, "secrets", None) if not isinstance(node, SequenceNode) else {
            self.string(n, "secrets"): (n, n) for n in node.value}
        for key, (key_node, value) in items.items():
            path = f"secrets.{key}"
            self.env_name(key_node, path, key)
            had_value = value is not key_node and not self.is_null(value)
            if key in env:
                del env[key]
            if key not in names:
                names.append(key)
            note = "the value written in the file is not used" if had_value else "no value in the file"
            self.mapped(key_node, path, f"secret {key}: {note} — asked for at launch, never stored", "secrets")
        return tuple(names)

    def file_mounts(self, node: Node | None, env: dict[str, str], providers: tuple[str, ...]) -> tuple[StorageMount, ...]:
        if node is None:
            return ()
        mounts: list[StorageMount] = []
        for raw_dest, (key_node, value) in self.mapping(node, "file_mounts", None).items():
            path = f"file_mounts.{raw_dest}"
            dest = self.expand(key_node, path, raw_dest, env).strip().rstrip("/") or "/"
            if dest.startswith("~"):
                self.refused(key_node, path, "a path under the remote home ('~') cannot be mounted yet: use an "
                                             "absolute path or one relative to the job's folder")
                continue
            if ".." in dest.split("/"):
                self.fail(key_node, path, f"must not contain '..', got '{dest}'")
            if any(m.path == dest for m in mounts):
                self.fail(key_node, path, f"'{dest}' is mounted twice")
            mount = self.one_mount(key_node, value, path, dest, env, providers)
            if mount is not None:
                mounts.append(mount)
        return tuple(mounts)

    def one_mount(self, key_node: Node, value: Node, path: str, dest: str, env: dict[str, str],
                  providers: tuple[str, ...]) -> StorageMount | None:
        if isinstance(value, ScalarNode):
            text = self.expand(value, path, self.string(value, path).strip(), env)
            if "://" in text:
                return self.storage_uri(key_node, path, text, dest, StorageMode.COPY, ", copied before setup")
            return self.local_mount(key_node, value, path, dest, text)
        f = self.mapping(value, path, _MOUNT_KEYS)

        def field(key: str) -> str | None:
            if key not in f or self.is_null(f[key][1]):
                return None
            return self.expand(f[key][1], f"{path}.{key}", self.text(f[key][1], f"{path}.{key}").strip(), env)

        store = (field("store") or "").lower()
        if store == "volume":
            self.refused(key_node, path, "volumes cannot be attached yet")
            return None
        mode_text = (field("mode") or "MOUNT").upper()
        if mode_text not in _MODES:
            self.fail(f["mode"][1], f"{path}.mode", f"must be one of {', '.join(_MODES)}, got '{mode_text}'"
                                                    f"{did_you_mean(mode_text, list(_MODES))}")
        mode = _MODES[mode_text]
        how = (", copied before setup" if mode is StorageMode.COPY else
               f", {mode_text} in SkyPilot: here uploaded every 5 min and at the end, brought back before a "
               "resumed run; it starts empty on a first run (use mode: COPY to read data)")
        for key in ("persistent", "config", "_force_delete", "_bucket_sub_path"):
            if key in f:
                self.ignored(f[key][0], f"{path}.{key}", "buckets are never created or deleted by this app")
        source, name = field("source"), field("name")
        if source and "://" in source:
            return self.storage_uri(key_node, path, source, dest, mode, how)
        if source:
            if name:
                self.ignored(f["name"][0], f"{path}.name", "the local folder is uploaded directly, not through "
                                                           "a new bucket")
            return self.local_mount(key_node, f["source"][1], f"{path}.source", dest, source)
        if not name:
            self.fail(value, f"{path}.name", "the bucket name is empty: fill it in (or give source: s3://…)")
        if store == "s3" or (not store and providers[:1] in ((), ("aws",))):
            assumed = "" if store else " — S3 assumed (SkyPilot uses the chosen cloud's store): add store: s3 to say so"
            return self.storage_uri(key_node, path, f"s3://{name}", dest, mode, how + assumed)
        if store == "azure" or providers[:1] == ("azure",):
            why = "an Azure container also needs its storage account: give source: https://ACCOUNT.blob.core." \
                  f"windows.net/{name}"
        else:
            why = f"store '{store or providers[0]}' cannot be mounted here (S3, Azure Blob and OSS can)"
        self.refused(key_node, path, why)
        return None

    def local_mount(self, key_node: Node, value: Node, path: str, dest: str, text: str) -> StorageMount | None:
        folder = self.local_dir(value, path, text)
        if folder is None:
            self.refused(key_node, path, f"'{text}' is a single file: only folders are uploaded here — put it in "
                                         "the workdir or mount its folder")
            return None
        self.mapped(key_node, path, f"storage: {dest} ← {folder} (uploaded before setup)", "storage")
        return StorageMount(dest, str(folder), StorageMode.COPY)

    def expand(self, node: Node, path: str, text: str, env: dict[str, str]) -> str:
        """SkyPilot fills ``$VAR``/``${VAR}`` of ``envs`` into file_mounts; so do we."""
        def one(m: re.Match[str]) -> str:
            name = m.group(1) or m.group(2)
            if name not in env:
                self.fail(node, path, f"uses ${name}, which envs does not give a value in the file")
            return env[name]
        return _VAR.sub(one, text)



def _workdir_note(script: str) -> str:
    if "sky_workdir" not in script:
        return ""
    return (" — note: it names ~/sky_workdir, SkyPilot's copy of the workdir; here the workdir is the job's "
            "folder, where setup and run start, and ~/sky_workdir does not exist")
