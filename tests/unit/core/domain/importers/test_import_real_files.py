"""Real public SkyPilot and dstack example files (tests/fixtures/importers, see SOURCES.md) → our spec or the error.

Every file that converts must also survive our own YAML form (``workbench convert``'s output
parses back to the same spec) and the store's dict form.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.core.domain.errors import SpecError
from workbench.core.domain.importers import IGNORED, KIND_DSTACK, KIND_SKYPILOT, KIND_WORKBENCH, MAPPED, \
    REFUSED, load_job_file
from workbench.core.domain.jobspec import parse_spec, spec_from_dict, spec_to_dict
from workbench.core.domain.models import (CHOOSE_IN_ORDER, Alternative, ContainerImage, GpuRequest, Port, StorageMode,
                                          StorageMount)
from workbench.core.domain.spec_yaml import spec_to_yaml

FIX = Path(__file__).resolve().parents[4] / "fixtures" / "importers"
SKY, DST = FIX / "skypilot", FIX / "dstack"
ALL_FILES = sorted(p for p in FIX.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml")
                   and "configs" not in p.parts and "synthetic" not in p.parts)


def convert(path: Path):
    result = load_job_file(path)
    assert result.spec is not None, [n for n in result.notes if n.status == REFUSED]
    return result, result.spec


def test_the_fixtures_are_at_least_a_dozen_of_each_kind_and_all_are_listed_with_their_source():
    sources = (FIX / "SOURCES.md").read_text()
    assert len(ALL_FILES) >= 24
    for path in ALL_FILES:
        assert f"| {path.relative_to(FIX).as_posix()} |" in sources, f"{path} has no source line"
    assert len([p for p in ALL_FILES if "skypilot" in p.parts]) >= 12
    assert len([p for p in ALL_FILES if "dstack" in p.parts]) >= 10


# -- SkyPilot -------------------------------------------------------------------------


def test_skypilot_minimal_cpu_task_pins_its_cloud():
    result, spec = convert(SKY / "minimal.yaml")
    assert result.kind == KIND_SKYPILOT
    assert (spec.name, spec.providers, spec.resources.gpu) == ("minimal", ("aws",), None)
    assert spec.setup == 'echo "running setup"' and spec.run == 'echo "hello, SkyPilot!"\n'


def test_skypilot_multi_node_torchrun_keeps_nodes_gpu_and_cpus():
    _, spec = convert(SKY / "distributed-pytorch" / "train.yaml")
    assert spec.name == "minGPT-ddp" and spec.num_nodes == 2
    assert spec.resources.gpu == GpuRequest("L4", 1, max_count=1) and spec.resources.cpus == 4  # exact, as SkyPilot
    assert "torchrun" in spec.run and "$SKYPILOT_NODE_IPS" in spec.run  # run as written: the variables are set


def test_skypilot_ordered_accelerator_list_becomes_alternatives_tried_in_order():
    _, spec = convert(SKY / "multi_accelerators.yaml")
    assert spec.choose == CHOOSE_IN_ORDER and spec.resources.gpu is None
    assert spec.alternatives == (Alternative(GpuRequest("A100", 1, 40.0, max_count=1, max_memory_gb=40.0)),
                                 Alternative(GpuRequest("V100", 1, max_count=1)),
                                 Alternative(GpuRequest("K80", 1, max_count=1)),
                                 Alternative(GpuRequest("T4", 1, max_count=1)))


def test_skypilot_spot_envs_and_file_mounts(tmp_path):
    result, spec = convert(SKY / "llama-3_1-finetuning" / "lora.yaml")
    assert spec.name == "lora"  # no name in the file: taken from its file name
    assert spec.resources.gpu == GpuRequest("A100", 8, max_count=8) and spec.resources.spot
    assert spec.env == {"MODEL_SIZE": "8B", "DATASET": "yahma/alpaca-cleaned",
                        "CHECKPOINT_BUCKET_NAME": "sky-llama-31-checkpoints"}
    assert spec.secrets == ("HF_TOKEN",)  # `HF_TOKEN:` without a value: asked for at launch
    assert spec.storage == (
        StorageMount("/configs", str((SKY / "llama-3_1-finetuning" / "configs").resolve()), StorageMode.COPY),
        StorageMount("/output", "s3://sky-llama-31-checkpoints", StorageMode.SYNC))  # $VAR filled from envs
    ignored = {n.field: n for n in result.notes if n.status == IGNORED}
    assert "resources.disk_tier" in ignored and ignored["resources.disk_tier"].line == 21
    mount = next(n for n in result.notes if n.field == "file_mounts./output")
    assert "S3 assumed" in mount.detail and "MOUNT" in mount.detail


def test_skypilot_bucket_mount_on_aws_is_a_synced_s3_mount():
    _, spec = convert(SKY / "spot" / "resnet.yaml")
    assert spec.providers == ("aws",) and spec.resources.gpu == GpuRequest("V100", 4, max_count=4)
    assert spec.resources.disk_gb == 256  # no disk_size: SkyPilot's default
    assert spec.storage == (StorageMount("/checkpoint", "s3://checkpoint-bucket-resnet", StorageMode.SYNC),)
    assert spec.recovery is None and not spec.resources.spot  # use_spot is commented out in the file


def test_skypilot_disk_and_azure():
    _, spec = convert(SKY / "disk_size.yaml")
    assert spec.providers == ("azure",) and spec.resources.disk_gb == 512


def test_skypilot_instance_type_is_an_alternative_and_network_tier_is_ignored_with_a_reason():
    result, spec = convert(SKY / "aws_efa" / "efa_vm.yaml")
    assert spec.num_nodes == 2 and spec.providers == ("aws",)
    assert spec.alternatives == (Alternative(provider="aws", instance_type="p4d.24xlarge"),)
    assert any(n.field == "resources.network_tier" and n.status == IGNORED and "rdma" in n.detail
               for n in result.notes)


def test_a_file_that_only_uses_shared_fields_reads_the_same_as_ours():
    result, spec = convert(SKY / "multi_hostname.yaml")
    assert result.kind == KIND_WORKBENCH and spec.num_nodes == 2 and spec.name == "multi_hostname"


@pytest.mark.parametrize("path, where, field, words", [
    (SKY / "custom_image.yaml", 6, "resources.image_id", "machine image (ami-062ddd90fb6f8267a)"),
    (SKY / "docker" / "kubernetes_dind.yaml", 22, "resources.cloud", "Kubernetes"),
    (DST / "examples-root" / ".dstack.yml", 1, "type", "dev environment"),
    (DST / "deployment" / "vllm" / ".dstack.yml", 1, "type", "service"),
    (DST / "misc" / "docker-compose" / "task.dstack.yml", 4, "docker", "Docker"),
    (DST / "misc" / "docker-compose" / "task.dstack.yml", 21, "volumes", "dstack volumes"),
    (DST / "deployment" / "nim" / "task.dstack.yml", 4, "commands", "the image's own command"),
])
def test_what_cannot_run_yet_is_refused_naming_file_line_and_field(path, where, field, words):
    result = load_job_file(path)
    assert result.spec is None
    hit = [n for n in result.refused if n.field == field]
    assert hit and hit[0].line == where and words in hit[0].detail
    with pytest.raises(SpecError) as info:
        result.require_spec()
    assert f"{path}:{where}: {field}: " in info.value.message
    assert len(info.value.message.splitlines()) == len(result.refused)  # every refusal listed, one a line
    assert "workbench convert" in info.value.hint


def test_several_refusals_are_all_listed():
    result = load_job_file(DST / "misc" / "docker-compose" / "task.dstack.yml")
    assert [(n.line, n.field) for n in result.refused] == [(4, "docker"), (21, "volumes")]
    ports = next(n for n in result.notes if n.field == "ports")  # ports are no refusal any more
    assert ports.line == 11 and ports.status == MAPPED


# -- images and ports (issue 34): the files refused for them before now convert ---------------


def test_skypilot_jupyter_lab_forwards_its_port_named_jupyter():
    result, spec = convert(SKY / "jupyter_lab.yaml")
    assert spec.ports == (Port(29324, "jupyter"),) and spec.image is None
    ports = next(n for n in result.notes if n.field == "resources.ports")
    assert ports.line == 15 and "127.0.0.1" in ports.detail and "nothing is opened to the Internet" in ports.detail


def test_skypilot_docker_image_runs_the_job_in_that_container():
    result, spec = convert(SKY / "autoresearch" / "experiment.yaml")
    assert spec.image == ContainerImage("nvcr.io/nvidia/pytorch:24.07-py3")
    assert spec.resources.gpu == GpuRequest("H100", 1, max_count=1) and spec.resources.disk_gb == 256
    reading = {n.field: n.detail for n in result.notes}
    assert "read as exactly 1 (SkyPilot counts are exact)" in reading["resources.accelerators"]
    assert "SkyPilot's default 256 GB" in reading["resources.disk_size"]


def test_dstack_axolotl_image_with_its_shared_memory():
    result, spec = convert(DST / "single-node-training" / "axolotl" / ".dstack.yml")
    assert spec.image == ContainerImage("axolotlai/axolotl:main-latest", shm_size="24g")
    assert spec.resources.gpu == GpuRequest("H100", 2, max_count=2) and spec.resources.disk_gb == 500
    assert spec.secrets == ("HF_TOKEN", "WANDB_API_KEY", "WANDB_PROJECT", "HUB_MODEL_ID")
    notes = {n.field: n for n in result.notes}
    assert (notes["image"].line, notes["image"].status) == (6, MAPPED)
    assert notes["resources.shm_size"].target == "image"
    assert "exactly 2 GPUs, as dstack does" in notes["resources.gpu"].detail


@pytest.mark.parametrize("path, image", [
    (DST / "deployment" / "tgi" / "serve-task.dstack.yml", "ghcr.io/huggingface/text-generation-inference:latest"),
    (DST / "deployment" / "vllm" / "serve-task.dstack.yml", "vllm/vllm-openai:latest"),
])
def test_dstack_inference_tasks_run_in_their_image_with_port_8000_on_an_exact_24_gb_gpu(path, image):
    result, spec = convert(path)
    assert spec.image == ContainerImage(image) and spec.ports == (Port(8000),)
    assert spec.resources.gpu == GpuRequest(None, 1, 24.0, max_count=1, max_memory_gb=24.0, vendor="NVIDIA")
    gpu = next(n for n in result.notes if n.field == "resources.gpu")
    assert "exactly 1 GPU and exactly 24 GB per GPU, as dstack does" in gpu.detail


def test_dstack_nim_task_maps_its_registry_login_but_needs_commands():
    result = load_job_file(DST / "deployment" / "nim" / "task.dstack.yml")
    assert [n.field for n in result.refused] == ["commands"]  # NIM runs the image's own command
    auth = next(n for n in result.notes if n.field == "registry_auth")
    assert auth.status == MAPPED and "$oauthtoken at nvcr.io" in auth.detail
    assert "launch secret NGC_API_KEY" in auth.detail


def test_dstack_qlora_forwards_tensorboard_and_leaves_run_args_empty():
    result, spec = convert(DST / "single-node-training" / "qlora" / ".dstack.yml")
    assert spec.ports == (Port(6006, "tensorboard"),)
    assert spec.run.endswith("train.py --merge_and_push") and "${{" not in spec.run
    assert spec.resources.gpu == GpuRequest(None, 1, 16.0, max_count=1, max_memory_gb=24.0, vendor="NVIDIA")
    assert any("run.args" in n.field and n.status == MAPPED for n in result.notes)


@pytest.mark.parametrize("path, message", [
    (SKY / "spot" / "bert_qa.yaml", "bert_qa.yaml:13: file_mounts./checkpoint.name: the bucket name is empty"),
    (SKY / "elastic_training" / "job.yaml", "job.yaml:22: this file holds 3 YAML documents"),
    (DST / "misc" / "github-actions" / ".dstack.yml", ".dstack.yml:1: this is not a job file"),
])
def test_files_that_are_not_runnable_tasks_are_clear_errors(path, message):
    with pytest.raises(SpecError) as info:
        load_job_file(path)
    assert message in info.value.message


# -- dstack -------------------------------------------------------------------------


def test_dstack_multi_node_torchrun_with_a_gpu_count_range():
    result, spec = convert(DST / "distributed-training" / "torchrun" / ".dstack.yml")
    assert result.kind == KIND_DSTACK
    assert spec.name == "train-distrib" and spec.num_nodes == 2
    assert spec.resources.gpu == GpuRequest(None, 1, max_count=8, vendor="NVIDIA")
    assert spec.env == {"NCCL_DEBUG": "INFO"}
    assert spec.run.startswith("git clone https://github.com/pytorch/examples.git pytorch-examples &&\n"
                               "cd pytorch-examples/distributed/ddp-tutorial-series &&\n")
    assert {n.field for n in result.notes if n.status == IGNORED} == {"python", "resources.shm_size"}


def test_dstack_bare_env_names_are_asked_for_and_a_memory_range_becomes_a_minimum():
    _, spec = convert(DST / "single-node-training" / "trl" / "train.dstack.yml")
    assert spec.secrets == ("HF_TOKEN", "WANDB_API_KEY", "HUB_MODEL_ID")
    assert spec.env == {"ACCELERATE_LOG_LEVEL": "info"}
    assert spec.resources.gpu == GpuRequest(None, 1, 24.0, vendor="NVIDIA")


def test_dstack_mpi_cluster_task_notes_startup_order_and_stop_criteria():
    result, spec = convert(DST / "clusters" / "nccl-tests" / ".dstack.yml")
    assert spec.num_nodes == 2 and spec.resources.gpu == GpuRequest(None, 1, max_count=8, vendor="NVIDIA")
    notes = {n.field: n for n in result.notes if n.status == IGNORED}
    assert "master-done" in notes["stop_criteria"].detail and "workers-first" in notes["startup_order"].detail


def test_dstack_task_without_a_name_takes_its_file_name():
    _, spec = convert(DST / "misc" / "airflow" / "dags" / "dstack-repo" / "task.dstack.yml")
    assert spec.name == "task"
    assert spec.run == 'echo "Running dstack task via Airflow" &&\nsleep 10 &&\necho "Finished"'


# -- every converted file, through our own forms ------------------------------------------


CONVERTING = [SKY / "minimal.yaml", SKY / "distributed-pytorch" / "train.yaml", SKY / "multi_accelerators.yaml",
              SKY / "llama-3_1-finetuning" / "lora.yaml", SKY / "spot" / "resnet.yaml", SKY / "disk_size.yaml",
              SKY / "aws_efa" / "efa_vm.yaml", SKY / "multi_hostname.yaml",
              DST / "distributed-training" / "torchrun" / ".dstack.yml",
              DST / "single-node-training" / "trl" / "train.dstack.yml", DST / "clusters" / "nccl-tests" / ".dstack.yml",
              DST / "misc" / "airflow" / "dags" / "dstack-repo" / "task.dstack.yml",
              SKY / "jupyter_lab.yaml", SKY / "autoresearch" / "experiment.yaml",
              DST / "single-node-training" / "axolotl" / ".dstack.yml",
              DST / "single-node-training" / "qlora" / ".dstack.yml",
              DST / "deployment" / "tgi" / "serve-task.dstack.yml",
              DST / "deployment" / "vllm" / "serve-task.dstack.yml"]


@pytest.mark.parametrize("path", CONVERTING, ids=lambda p: p.relative_to(FIX).as_posix())
def test_every_converted_file_round_trips_through_our_yaml_and_the_store(path):
    result, spec = convert(path)
    again = parse_spec(spec_to_yaml(spec), source=str(path), base_dir=path.parent)
    assert again == spec
    assert spec_from_dict(json.loads(json.dumps(spec_to_dict(spec)))) == spec
    assert all(n.line >= 1 and n.detail for n in result.notes)
