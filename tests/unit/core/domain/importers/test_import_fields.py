"""Field by field: the synthetic files (tests/fixtures/importers/synthetic, see its README) and bad input.

The inline snippets below are test inputs for single fields, written for these tests.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from workbench.core.domain.errors import SpecError
from workbench.core.domain.importers import IGNORED, MAPPED, REFUSED, import_text, load_job_file
from workbench.core.domain.models import (CHOOSE_CHEAPEST, CHOOSE_IN_ORDER, Alternative, GpuRequest, Guards,
                                          Recovery, StorageMode, StorageMount)

SYN = Path(__file__).resolve().parents[4] / "fixtures" / "importers" / "synthetic"


def sky(text: str, tmp_path: Path | None = None):
    return import_text(textwrap.dedent(text), source="task.yaml", base_dir=tmp_path)


def error_of(text: str, tmp_path: Path | None = None) -> str:
    with pytest.raises(SpecError) as info:
        result = sky(text, tmp_path)
        result.require_spec()
    return info.value.message


# -- SkyPilot ----------------------------------------------------------------------------


def test_skypilot_any_of_with_spot_recovery_autostop_and_secrets():
    result = load_job_file(SYN / "any_of.yaml")
    spec = result.spec
    assert spec is not None
    assert spec.alternatives == (
        Alternative(GpuRequest("H100", 8, max_count=8), provider="aws", region="us-west-2"),
        Alternative(GpuRequest("A100", 8, 80.0, max_count=8, max_memory_gb=80.0), provider="azure", region="eastus"))
    assert spec.choose == CHOOSE_CHEAPEST and spec.providers == ("aws", "azure")
    assert spec.resources.spot and spec.resources.max_price == 40 and spec.resources.memory_gb == 64
    assert spec.resources.disk_gb == 1024
    assert spec.recovery == Recovery(2, ("preemption", "failure"))
    assert spec.guards.idle_minutes == 120
    assert spec.env == {"EPOCHS": "3"}
    assert spec.secrets == ("HF_TOKEN", "WANDB_API_KEY")
    gcp = next(n for n in result.notes if n.field == "resources.any_of[2].infra")
    assert gcp.status == IGNORED and gcp.line == 10 and "gcp" in gcp.detail
    kept = next(n for n in result.notes if n.field == "secrets.WANDB_API_KEY")
    assert "not used" in kept.detail
    assert "a-value-that-must-not-be-kept" not in repr(spec) + repr(result.notes)


def test_skypilot_accelerator_set_in_ordered_regions_and_bucket_mounts():
    spec = load_job_file(SYN / "ordered_set.yaml").spec
    assert spec is not None and spec.choose == CHOOSE_IN_ORDER
    assert [(a.gpu.model, a.region) for a in spec.alternatives] == [
        ("A10G", "us-east-1"), ("L4", "us-east-1"), ("T4", "us-east-1"),
        ("A10G", "us-west-2"), ("L4", "us-west-2"), ("T4", "us-west-2")]
    assert spec.storage == (StorageMount("/data", "s3://my-dataset/imagenet", StorageMode.COPY),
                            StorageMount("/models", "s3://my-models", StorageMode.COPY),
                            StorageMount("/ckpt", "s3://my-ckpt", StorageMode.SYNC))
    assert spec.guards.idle_minutes == 15 and spec.recovery is None


@pytest.mark.parametrize("accelerators, expected, choose", [
    ("V100", [GpuRequest("V100", 1, max_count=1)], None),  # SkyPilot's counts are exact
    ("'A100-80GB:8'", [GpuRequest("A100", 8, 80.0, max_count=8, max_memory_gb=80.0)], None),
    ("{V100: 4}", [GpuRequest("V100", 4, max_count=4)], None),
    ("[T4:1, V100:1]", [GpuRequest("T4", 1, max_count=1), GpuRequest("V100", 1, max_count=1)], CHOOSE_IN_ORDER),
    ("{T4:1, V100:1}", [GpuRequest("T4", 1, max_count=1), GpuRequest("V100", 1, max_count=1)], CHOOSE_CHEAPEST),
])
def test_skypilot_accelerator_forms(accelerators, expected, choose):
    spec = sky(f"run: x\nresources:\n  accelerators: {accelerators}\n").require_spec()
    if len(expected) == 1:
        assert spec.resources.gpu == expected[0] and not spec.alternatives
    else:
        assert [a.gpu for a in spec.alternatives] == expected and spec.choose == choose


@pytest.mark.parametrize("resources, providers, regions", [
    ("infra: aws/us-east-1", ("aws",), ("us-east-1",)),
    ("infra: aws/*/us-east-1a", ("aws",), ()),
    ("infra: azure", ("azure",), ()),
    ("cloud: aws\n  region: eu-west-1\n  zone: eu-west-1b", ("aws",), ("eu-west-1",)),
    ("infra: lambda/us-east-1", (), ()),  # not a cloud here: ignored with a reason, any cloud
])
def test_skypilot_infra_and_the_older_cloud_region_zone(resources, providers, regions):
    result = sky(f"run: x\nresources:\n  {resources}\n")
    spec = result.require_spec()
    assert (spec.providers, spec.regions) == (providers, regions)


def test_skypilot_cpus_memory_and_units_read_as_at_least():
    result = sky("run: x\nresources:\n  cpus: 8\n  memory: 1024MB\n  disk_size: 256GB\n")
    spec = result.require_spec()
    assert (spec.resources.cpus, spec.resources.memory_gb, spec.resources.disk_gb) == (8, 1.0, 256)
    cpus = next(n for n in result.notes if n.field == "resources.cpus")
    assert cpus.status == MAPPED and "exactly 8 in SkyPilot; at least here" in cpus.detail


@pytest.mark.parametrize("autostop, minutes", [("true", 5), ("false", None), ("10", 10), ("10h", 600),
                                               ("{idle_minutes: 7, down: true}", 7)])
def test_skypilot_autostop_becomes_the_idle_guard(autostop, minutes):
    assert sky(f"run: x\nresources:\n  autostop: {autostop}\n").require_spec().guards.idle_minutes == minutes


def test_skypilot_local_file_mounts_and_env_substitution(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "one-file.txt").write_text("x")
    result = sky("""\
        envs: {SUB: data}
        file_mounts:
          /remote/data: ./${SUB}
          /remote/file: ./one-file.txt
          relative: ./data
        run: x
        """, tmp_path)
    refused = [(n.field, n.line) for n in result.refused]
    assert refused == [("file_mounts./remote/file", 4)]
    assert "single file" in result.refused[0].detail
    mapped = [n.detail for n in result.notes if n.field.startswith("file_mounts.") and n.status == MAPPED]
    assert len(mapped) == 2 and str(tmp_path / "data") in mapped[0]


def test_skypilot_refusals_are_collected_in_one_pass():
    result = sky("""\
        resources:
          image_id: ami-0123456789abcdef0
          ports: 10000-20000
          infra: k8s/my-context
        service:
          readiness_probe: /
        run: x
        """)
    assert [(n.line, n.field) for n in result.refused] == [
        (2, "resources.image_id"), (3, "resources.ports"), (4, "resources.infra"), (5, "service")]
    why = {n.field: n.detail for n in result.refused}
    image = why["resources.image_id"]
    assert "machine image (ami-0123456789abcdef0)" in image and "docker:" in image
    assert "10001 ports" in why["resources.ports"] and "at most 100" in why["resources.ports"]


@pytest.mark.parametrize("text, message", [
    ("run: x\nresorces: {}\n", "task.yaml:2: resorces: unknown field — did you mean 'resources'?"),
    ("envs: {A: 1}\nrun: x\nresources:\n  acelerators: V100\n",
     "task.yaml:4: resources.acelerators: unknown field — did you mean 'accelerators'?"),
    ("envs: {A: 1}\nresources: {accelerators: V1OO}\nrun: x\n", "unknown GPU model 'V1OO' — did you mean V100?"),
    ("envs: {A: 1}\nresources: {accelerators: 'T4:0.5'}\nrun: x\n", "fractions of a GPU"),
    ("envs: {A: 1}\nresources: {accelerators: tpu-v2-8}\nrun: x\n", "TPUs cannot be rented here"),
    ("envs: {A: 1}\nsetup: x\n", "task.yaml:1: run: required here"),
    ("envs: {A-B: 1}\nrun: x\n", "'A-B' is not a variable name"),
    ("envs: {A: 1}\nrun: x\nnum_nodes: 0\n", "task.yaml:3: num_nodes: must be a whole number from 1 to 64"),
    ("envs: {A: 1}\nrun: x\nresources: {memory: lots}\n", "resources.memory: must be a size"),
    ("envs: {A: 1}\nrun: x\nresources: {infra: aws, cloud: aws}\n", "give infra or cloud/region/zone, not both"),
    ("envs: {A: 1}\nrun: x\nresources:\n  any_of: [{infra: aws}]\n  ordered: [{infra: aws}]\n",
     "give any_of or ordered, not both"),
    ("envs: {A: 1}\nrun: x\nresources:\n  any_of: [{cpus: 4}]\n", "resources.any_of[0].cpus: not supported inside"),
    ("envs: {A: 1}\nrun: x\nresources: {job_recovery: SOMETIMES}\n", "strategy must be one of FAILOVER"),
    ("envs: {A: 1}\nrun: x\nfile_mounts: {/d: $NOPE/x}\n", "uses $NOPE, which envs does not give a value"),
    ("envs: {A: 1}\nrun: x\nfile_mounts: {/d: gs://bucket/x}\n", "task.yaml:3: file_mounts./d: 'gs://bucket/x'"),
    ("envs: {A: 1}\nrun: x\nfile_mounts: {/d: ./missing}\n", "'./missing' does not exist"),
    ("envs: {A: 1}\nrun: x\nfile_mounts: {/d: {name: b, store: gcs}}\n", "store 'gcs' cannot be mounted here"),
    ("envs: {A: 1}\nrun: x\nresources: {infra: azure}\nfile_mounts: {/d: {name: b}}\n",
     "needs its storage account"),
    ("envs: {A: 1}\nrun: x\nworkdir: {url: 'https://github.com/a/b'}\n", "a git repository as workdir"),
])
def test_skypilot_bad_input_names_file_line_and_field(tmp_path, text, message):
    assert message in error_of(text, tmp_path)


# -- dstack ------------------------------------------------------------------------------


def test_dstack_profile_fields():
    result = load_job_file(SYN / "dstack-project" / "full.dstack.yml")
    spec = result.spec
    assert spec is not None
    gpus = [GpuRequest(m, 2, 24.0, max_count=2, max_memory_gb=40.0) for m in ("A10G", "A100")]
    assert spec.alternatives == tuple(Alternative(g, spot=s) for s in (True, False) for g in gpus)
    assert (spec.resources.cpus, spec.resources.memory_gb, spec.resources.disk_gb) == (8, 32.0, 200)
    assert spec.resources.max_price == 2.5 and not spec.resources.spot
    assert spec.recovery == Recovery(3, ("preemption", "failure"))
    assert spec.guards == Guards(max_runtime_minutes=360, idle_minutes=30, idle_util_below=10.0)
    assert spec.providers == ("aws", "azure") and spec.regions == ("us-east-1", "eastus")
    assert spec.secrets == ("HF_TOKEN",) and spec.env == {"LR": "0.001"}
    assert spec.workdir == str((SYN / "dstack-project").resolve())
    assert spec.storage == (StorageMount("data", str((SYN / "dstack-project" / "data").resolve())),)
    assert spec.run == "cd src &&\npython train.py --lr $LR"
    ignored = {n.field for n in result.notes if n.status == IGNORED}
    assert {"idle_duration", "backends", "retry.duration", "retry.on_events: no-capacity"} <= ignored


def dst(body: str, tmp_path: Path | None = None):
    return import_text("type: task\ncommands: [echo hi]\n" + textwrap.dedent(body), source="t.dstack.yml",
                       base_dir=tmp_path)


@pytest.mark.parametrize("gpu, expected", [
    ("H100:1..2", [GpuRequest("H100", 1, max_count=2)]),
    ("24GB..40GB:2", [GpuRequest(None, 2, 24.0, max_count=2, max_memory_gb=40.0, vendor="NVIDIA")]),
    ("A100:8", [GpuRequest("A100", 8, max_count=8)]),  # a count without a range is exact, as in dstack
    ("A100:80GB:2", [GpuRequest("A100", 2, 80.0, max_count=2, max_memory_gb=80.0)]),
    ("amd:2", [GpuRequest(None, 2, max_count=2, vendor="AMD")]),
    ("2", [GpuRequest(None, 2, max_count=2, vendor="NVIDIA")]),
    ("24GB", [GpuRequest(None, 1, 24.0, max_count=1, max_memory_gb=24.0, vendor="NVIDIA")]),  # exactly 24 GB
    ("A10G,A100", [GpuRequest("A10G", 1, max_count=1), GpuRequest("A100", 1, max_count=1)]),
    ("{name: [H100, H200], count: 2.., memory: 80GB..}", [GpuRequest("H100", 2, 80.0), GpuRequest("H200", 2, 80.0)]),
    ("{count: {min: 1, max: 4}}", [GpuRequest(None, 1, max_count=4, vendor="NVIDIA")]),
])
def test_dstack_gpu_forms(gpu, expected):
    spec = dst(f"resources:\n  gpu: {gpu}\n").require_spec()
    got = [a.gpu for a in spec.alternatives] if spec.alternatives else [spec.resources.gpu]
    assert got == expected


@pytest.mark.parametrize("body, check", [
    ("spot_policy: spot\n", lambda s: s.resources.spot and not s.alternatives),
    ("spot_policy: on-demand\n", lambda s: not s.resources.spot),
    ("retry: true\n", lambda s: s.recovery == Recovery(3, ("preemption", "failure"))),
    ("retry: {on_events: [interruption]}\n", lambda s: s.recovery == Recovery(3, ("preemption",))),
    ("retry: {on_events: [no-capacity]}\n", lambda s: s.recovery is None),
    ("max_duration: 90m\n", lambda s: s.guards.max_runtime_minutes == 90),
    ("max_duration: 7200\n", lambda s: s.guards.max_runtime_minutes == 120),  # dstack: a number is seconds
    ("max_duration: off\n", lambda s: s.guards.max_runtime_minutes == 24 * 60),  # never unlimited here
    ("instance_types: [p3.2xlarge, g5.xlarge]\n",
     lambda s: [a.instance_type for a in s.alternatives] == ["p3.2xlarge", "g5.xlarge"]),
    ("env: {A: '1', B: null}\n", lambda s: s.env == {"A": "1"} and s.secrets == ("B",)),
    ("working_dir: /workflow/sub\n", lambda s: s.run == "cd sub &&\necho hi"),
    ("working_dir: /opt/elsewhere\n", lambda s: s.run == "echo hi"),
    ("resources: {cpu: 4}\n", lambda s: s.resources.cpus == 4),
    ("resources: {cpu: {min: 2, max: 8}}\n", lambda s: s.resources.cpus == 2),
    ("resources: {disk: {size: 300GB..}}\n", lambda s: s.resources.disk_gb == 300),
])
def test_dstack_single_fields(body, check):
    assert check(dst(body).require_spec())


@pytest.mark.parametrize("body, field, line", [
    ("resources: {cpu: 'arm:8'}\n", "resources.cpu", 3),
    ("env: [A=x, 'B=${{ env.C }}']\n", "env.B", 3),
    ("repos: ['https://github.com/a/b']\n", "repos[0]", 3),
    ("schedule: {cron: '0 * * * *'}\n", "schedule", 3),
    ("image: repo/app:1\nregistry_auth: {username: u, password: p}\n", "registry_auth.password", 4),
    ("image: repo/app:1\nenv: [TOKEN=abc]\nregistry_auth: {username: u, password: '${{ env.TOKEN }}'}\n",
     "registry_auth.password", 5),
    ("image: repo/app:1\nregistry_auth: {username: '${{ secrets.U }}', password: '${{ secrets.P }}'}\n",
     "registry_auth.username", 4),
    ("docker: true\n", "docker", 3),
    ("volumes: [{name: v, path: /data}]\n", "volumes", 3),
    ("entrypoint: /bin/app\n", "entrypoint", 3),
])
def test_dstack_refusals(body, field, line):
    result = dst(body)
    assert [(n.field, n.line) for n in result.refused] == [(field, line)]


@pytest.mark.parametrize("text, message", [
    ("type: task\n", "t.dstack.yml:1: commands: required"),
    ("type: task\ncommands: []\n", "commands: must not be empty"),
    ("type: task\ncommands: [x]\nnodez: 2\n", "t.dstack.yml:3: nodez: unknown field — did you mean 'nodes'?"),
    ("type: task\ncommands: [x]\nenv: [A=1, A=2]\n", "A is set twice"),
    ("type: task\ncommands: [x]\nspot_policy: sometimes\n", "must be spot, on-demand or auto"),
    ("type: task\ncommands: [x]\nresources: {gpu: 'H100:99'}\n", "GPU count must be from 1 to 64"),
    ("type: task\ncommands: [x]\nresources: {gpu: 'tpu:v2-8'}\n", "'tpu' accelerators"),
    ("type: task\ncommands: [x]\nresources: {memory: 64GB..32GB}\n", "the range is backwards"),
    ("type: task\ncommands: [x]\nmax_duration: soon\n", "max_duration: must be a duration"),
    ("type: task\ncommands: [x]\nretry: {on_events: [crash]}\n", "'crash' is not an event"),
    ("type: task\ncommands: [x]\nrepos: [., ..]\n", "one repo per run"),
    ("commands: [x]\n", "a dstack configuration starts with `type: task`"),
])
def test_dstack_bad_input(text, message):
    with pytest.raises(SpecError) as info:
        import_text(text, source="t.dstack.yml").require_spec()
    assert message in info.value.message


def test_dstack_other_configuration_types_are_refused_not_guessed():
    for kind in ("fleet", "volume", "gateway"):
        result = import_text(f"type: {kind}\nname: x\n", source="f.dstack.yml")
        assert [(n.field, n.status) for n in result.notes] == [("type", REFUSED)]
        assert "only `type: task` runs here" in result.notes[0].detail


def test_scripts_that_name_the_other_tools_working_folders_get_a_note():
    sky_result = sky("envs: {A: 1}\nrun: cd ~/sky_workdir && make\n")
    note = next(n for n in sky_result.notes if n.field == "run")
    assert "~/sky_workdir does not exist" in note.detail
    dst_result = dst("setup: [ls /workflow]\n")
    assert "/workflow, dstack's working folder" in next(n for n in dst_result.notes if n.field == "setup").detail


def test_convert_of_our_own_spec_says_so_and_writes_it_back():
    from workbench.core.domain.importers.report import render_converted

    result = import_text("name: mine\nrun: echo hi\nresources: {gpu: V100:2}\n", source="mine.yaml")
    text = render_converted(result)
    assert text.startswith("# mine.yaml: already a workbench job spec\n")
    assert "gpu: V100:2" in text and "run: |\n  echo hi" not in text  # one line: a plain scalar
