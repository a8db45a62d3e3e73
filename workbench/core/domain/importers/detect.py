"""Which kind of job file is this: our spec, a SkyPilot task, or a dstack configuration — by its keys."""

from __future__ import annotations

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode

from workbench.core.domain.errors import SpecError
from workbench.core.domain.importers.base import KIND_DSTACK, KIND_SKYPILOT, KIND_WORKBENCH
from workbench.core.domain.yaml_reader import NodeReader

DSTACK_TYPES = ("task", "service", "dev-environment", "fleet", "volume", "gateway")
#: top-level keys only SkyPilot uses (ours are env, storage, …)
SKYPILOT_ONLY = {"envs", "file_mounts", "config", "service", "experimental", "event_callback", "inputs", "volumes",
                 "pool"}
#: resources keys only SkyPilot uses (ours: gpu, cpus, memory_gb, disk_gb, spot, max_price, network)
SKYPILOT_RESOURCES = {"infra", "cloud", "region", "zone", "accelerators", "accelerator_args", "memory",
                      "instance_type", "use_spot", "disk_size", "disk_tier", "network_tier", "image_id", "ports",
                      "labels", "autostop", "any_of", "ordered", "job_recovery", "spot_recovery", "max_hourly_cost"}
#: keys a workbench spec and a SkyPilot task share with the same meaning
SHARED = {"name", "workdir", "num_nodes", "resources", "setup", "run", "secrets"}
_JOB_KEYS = {"run", "setup", "resources", "commands", "type"}


def detect(text: str, source: str) -> tuple[str, Node | None]:
    """(kind, composed root) of the job file ``text``; raises SpecError for what is no job file at all.

    A file that only uses the fields our spec and SkyPilot share (name, run, setup, num_nodes,
    workdir, resources with gpu/cpus) reads the same either way and is read as ours.
    """
    reader = NodeReader(source)
    try:
        root = reader.compose(text)
    except SpecError as e:
        if "single document" in e.message:
            _several_documents(text, source)
        raise
    if not isinstance(root, MappingNode):
        return KIND_WORKBENCH, root  # our parser says what is wrong
    keys = {k.value: v for k, v in root.value if isinstance(k, ScalarNode)}
    kind = keys.get("type")
    if isinstance(kind, ScalarNode) and kind.value in DSTACK_TYPES:
        return KIND_DSTACK, root
    if "commands" in keys and "run" not in keys and "type" not in keys:
        reader.fail(root, "type", "missing: a dstack configuration starts with `type: task` (a workbench job "
                                  "spec or SkyPilot task has `run` instead of `commands`)")
    if not _JOB_KEYS & keys.keys():
        reader.fail(root, "", "this is not a job file: expected a workbench job spec or SkyPilot task (with `run`) "
                              "or a dstack task (`type: task` with `commands`); found "
                              + ", ".join(sorted(keys)[:8]))
    resources = keys.get("resources")
    res_keys = {k.value for k, _ in resources.value if isinstance(k, ScalarNode)} \
        if isinstance(resources, MappingNode) else set()
    if (SKYPILOT_ONLY & keys.keys() or SKYPILOT_RESOURCES & res_keys
            or isinstance(keys.get("secrets"), MappingNode) or isinstance(keys.get("workdir"), MappingNode)):
        return KIND_SKYPILOT, root
    return KIND_WORKBENCH, root


def _several_documents(text: str, source: str) -> None:
    lines = []
    try:
        for node in yaml.compose_all(text, Loader=yaml.SafeLoader):
            if node is not None:
                lines.append(node.start_mark.line + 1)
    except (yaml.YAMLError, RecursionError):  # compose() says what is wrong with it
        return
    if len(lines) > 1:
        raise SpecError(f"{source}:{lines[1]}: this file holds {len(lines)} YAML documents (a SkyPilot pipeline or "
                        "job group): only a single task per file runs here",
                        hint="put each task in its own file and launch them one by one")
