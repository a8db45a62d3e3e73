"""Job spec loading and validation (workbench.core.domain.jobspec)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from workbench.core.domain.errors import SpecError
from workbench.core.domain.jobspec import load_spec, parse_spec, spec_from_dict, spec_to_dict
from workbench.core.domain.models import GpuRequest, Guards, JobSpec, OnFinish, Resources

EXAMPLES = Path(__file__).resolve().parents[4] / "resources" / "examples"
MINIMAL = "name: mnist\nrun: python train.py\n"


def parse(text: str, **kw) -> JobSpec:
    return parse_spec(textwrap.dedent(text), source="train.yaml", **kw)


def error_of(text: str, **kw) -> str:
    with pytest.raises(SpecError) as info:
        parse(text, **kw)
    return info.value.message


# -- examples --------------------------------------------------------------


@pytest.mark.parametrize("name", ["local-smoke", "v100-single", "a100x8"])
def test_examples_load(name: str) -> None:
    spec = load_spec(EXAMPLES / f"{name}.yaml")
    assert spec.source == str(EXAMPLES / f"{name}.yaml")
    assert spec.guards.max_runtime_minutes is not None
    assert spec.on_finish is OnFinish.TERMINATE


def test_local_smoke_example_is_cpu_only_with_existing_workdir() -> None:
    spec = load_spec(EXAMPLES / "local-smoke.yaml")
    assert spec.resources.gpu is None
    assert spec.run == "python3 train.py"
    assert spec.guards.max_runtime_minutes == 10
    assert spec.workdir == str((EXAMPLES / "local-smoke").resolve())
    assert (Path(spec.workdir) / "train.py").is_file()
    assert "EPOCHS" in spec.env


def test_gpu_examples() -> None:
    v100 = load_spec(EXAMPLES / "v100-single.yaml")
    assert v100.resources.gpu == GpuRequest("V100", 1)
    assert v100.resources.spot is False
    a100 = load_spec(EXAMPLES / "a100x8.yaml")
    assert a100.resources.gpu == GpuRequest("A100", 8, 40.0)
    assert (a100.resources.network_min_gbps, a100.resources.rdma) == (100.0, True)
    assert a100.run.startswith("torchrun ")
    assert a100.guards.budget_usd is not None


# -- valid specs -----------------------------------------------------------


def test_defaults() -> None:
    spec = parse(MINIMAL)
    # no GPU asked for: no idle guard by default (it watches GPU use), as the wizard gives none (issue 29)
    assert spec == JobSpec(name="mnist", run="python train.py", source="train.yaml", guards=Guards(idle_minutes=None))
    assert spec.resources == Resources()
    assert spec.resources.disk_gb == 100
    assert spec.guards == Guards(idle_minutes=None)
    assert parse(MINIMAL + "resources:\n  gpu: V100\n").guards == Guards()  # a GPU job: the default 30 min
    assert parse(MINIMAL + "guards:\n  idle_minutes: 15\n").guards.idle_minutes == 15  # set on purpose: kept
    assert spec.guards.max_runtime_minutes == 24 * 60
    assert spec.on_finish is OnFinish.TERMINATE
    assert (spec.providers, spec.regions, dict(spec.env), spec.workdir, spec.setup) == ((), (), {}, None, None)


@pytest.mark.parametrize(
    ("gpu", "expected"),
    [
        ("V100", GpuRequest("V100", 1)),
        ("v100:4", GpuRequest("V100", 4)),
        ("A100:8", GpuRequest("A100", 8)),
        ("any", GpuRequest(None, 1)),
        ("any:2", GpuRequest(None, 2)),
        ("{model: H100, count: 8, min_memory_gb: 80}", GpuRequest("H100", 8, 80.0)),
        ("{count: 2}", GpuRequest(None, 2)),
        ("{model: any, min_memory_gb: 24}", GpuRequest(None, 1, 24.0)),
        ("null", None),
    ],
)
def test_gpu_formats(gpu: str, expected: GpuRequest | None) -> None:
    assert parse(MINIMAL + f"resources:\n  gpu: {gpu}\n").resources.gpu == expected


def test_full_spec() -> None:
    spec = parse(
        """\
        name: big-run.v2
        resources:
          gpu: L40S:2
          cpus: 16
          memory_gb: 64.5
          disk_gb: 250
          spot: true
          max_price: 4
          network: {min_gbps: 25, rdma: true}
        setup: |
          pip install -r requirements.txt
        run: python train.py
        env: {EPOCHS: 3, LR: 1e-3, DEBUG: true, NAME: hello}
        on_finish: stop
        guards:
          max_runtime: 1h30m
          idle_minutes: off
          idle_util_below: 2.5
          budget_usd: 50
        providers: AWS
        regions: [us-east-1, eu-west-1]
        """
    )
    assert spec.resources == Resources(GpuRequest("L40S", 2), 16, 64.5, 250, True, 4.0, 25.0, True)
    assert spec.setup == "pip install -r requirements.txt\n"
    assert dict(spec.env) == {"EPOCHS": "3", "LR": "1e-3", "DEBUG": "true", "NAME": "hello"}
    assert spec.on_finish is OnFinish.STOP
    assert spec.guards == Guards(max_runtime_minutes=90, idle_minutes=None, idle_util_below=2.5, budget_usd=50.0)
    assert spec.providers == ("aws",)
    assert spec.regions == ("us-east-1", "eu-west-1")


@pytest.mark.parametrize(
    ("value", "minutes"),
    [("90", 90), ("'90'", 90), ("90m", 90), ("2h", 120), ("1d", 1440), ("1h30m", 90), ("1d 2h", 1560), ("45min", 45)],
)
def test_durations(value: str, minutes: int) -> None:
    assert parse(MINIMAL + f"guards:\n  max_runtime: {value}\n").guards.max_runtime_minutes == minutes


@pytest.mark.parametrize("value", ["null", "off", "'off'", "false"])
def test_idle_shutdown_can_be_disabled_explicitly(value: str) -> None:
    assert parse(MINIMAL + f"guards:\n  idle_minutes: {value}\n").guards.idle_minutes is None


def test_workdir_relative_to_base_dir(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    spec = parse(MINIMAL + "workdir: ./src\n", base_dir=tmp_path)
    assert spec.workdir == str((tmp_path / "src").resolve())


def test_load_spec_resolves_workdir_relative_to_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "project" / "src").mkdir(parents=True)
    spec_file = tmp_path / "project" / "train.yaml"
    spec_file.write_text(MINIMAL + "workdir: src\n")
    monkeypatch.chdir(tmp_path)  # a cwd-relative lookup would find no 'src' here
    spec = load_spec("project/train.yaml")
    assert spec.workdir == str((tmp_path / "project" / "src").resolve())
    assert spec.source == "project/train.yaml"


def test_yaml_merge_keys_work() -> None:
    spec = parse(
        """\
        name: m
        run: r
        resources: {cpus: 4}
        guards:
          <<: {idle_minutes: 10, max_runtime: 3h}
          max_runtime: 1h
        """
    )
    assert spec.resources.cpus == 4
    assert (spec.guards.idle_minutes, spec.guards.max_runtime_minutes) == (10, 60)


# -- errors: exact file:line: field: prefix ------------------------------

RES = MINIMAL + "resources:\n  "  # the next text is on line 4
GRD = MINIMAL + "guards:\n  "
NUM = "must be a number > 0"

# (id, spec text, the message's expected start: "train.yaml:LINE: FIELD: problem")
ERROR_CASES = [
    ("malformed-yaml", "name: x\nrun: [unclosed\n", "train.yaml:2: invalid YAML: a '[' list is not closed"),
    ("malformed-indent", "name: x\nrun: y\n  bad: indent\n", "train.yaml:3: invalid YAML: a second ':' on one line"),
    ("two-documents", MINIMAL + "---\nname: y\n", "train.yaml:3: invalid YAML: expected a single document"),
    ("control-char", "name: x\x07\nrun: y\n", "train.yaml:1: invalid YAML: unacceptable character"),
    ("unknown-gpu", RES + "cpus: 4\n  gpu: V1OO\n",
     "train.yaml:5: resources.gpu: unknown GPU model 'V1OO' — did you mean V100?"),
    ("unknown-gpu-mapping", RES + "gpu: {model: V1OO, count: 2}\n",
     "train.yaml:4: resources.gpu.model: unknown GPU model 'V1OO' — did you mean V100?"),
    ("gpu-count-0", RES + "gpu: V100:0\n", "train.yaml:4: resources.gpu: GPU count"),
    ("gpu-count-x", RES + "gpu: V100:x\n", "train.yaml:4: resources.gpu: GPU count"),
    ("gpu-count-high", RES + "gpu: {model: T4, count: 65}\n", "train.yaml:4: resources.gpu.count: "),
    ("gpu-int", RES + "gpu: 2\n", "train.yaml:4: resources.gpu: must be 'MODEL'"),
    ("negative-budget", GRD + "budget_usd: -5\n", f"train.yaml:4: guards.budget_usd: {NUM}, got -5"),
    ("zero-budget", GRD + "budget_usd: 0\n", f"train.yaml:4: guards.budget_usd: {NUM}, got 0"),
    ("text-budget", GRD + "budget_usd: fifty\n", f"train.yaml:4: guards.budget_usd: {NUM}, got 'fifty' (a string)"),
    ("bool-budget", GRD + "budget_usd: true\n", f"train.yaml:4: guards.budget_usd: {NUM}, got true (a boolean)"),
    ("nan-budget", GRD + "budget_usd: .nan\n", f"train.yaml:4: guards.budget_usd: {NUM}, got nan"),
    ("null-budget", GRD + "budget_usd:\n", f"train.yaml:4: guards.budget_usd: {NUM} (omit"),
    ("bool-as-int", RES + "cpus: true\n", "train.yaml:4: resources.cpus: must be a whole number >= 1, got true"),
    ("bool-as-number", RES + "memory_gb: yes\n", f"train.yaml:4: resources.memory_gb: {NUM}, got true"),
    ("float-as-int", RES + "cpus: 2.5\n", "train.yaml:4: resources.cpus: must be a whole number >= 1, got 2.5"),
    ("bad-bool", RES + "spot: yes please\n",
     "train.yaml:4: resources.spot: must be true or false, got 'yes please' (a string)"),
    ("int-as-bool", RES + "network: {rdma: 1}\n", "train.yaml:4: resources.network.rdma: must be true or false"),
    ("util-range", GRD + "idle_util_below: 150\n",
     "train.yaml:4: guards.idle_util_below: must be a number > 0 and <= 100, got 150"),
    ("unknown-top-key", MINIMAL + "resorces:\n  cpus: 4\n",
     "train.yaml:3: resorces: unknown field — did you mean 'resources'?"),
    ("unknown-guard-key", GRD + "max_runtme: 2h\n",
     "train.yaml:4: guards.max_runtme: unknown field — did you mean 'max_runtime'?"),
    ("unknown-resource-key", RES + "gpus: V100\n",
     "train.yaml:4: resources.gpus: unknown field — did you mean 'gpu'?"),
    ("unknown-no-guess", MINIMAL + "zzz: 1\n", "train.yaml:3: zzz: unknown field — expected one of: name,"),
    ("duplicate-key", MINIMAL + "run: again\n", "train.yaml:3: run: appears twice"),
    ("missing-run", "name: mnist\nsetup: echo hi\n", "train.yaml:1: run: required field is missing"),
    ("missing-name", "run: x\n", "train.yaml:1: name: required field is missing"),
    ("empty-run", "name: x\nrun: '  '\n", "train.yaml:2: run: must not be empty"),
    ("list-run", "name: x\nrun: [a, b]\n", "train.yaml:2: run: must be a string, got a list"),
    ("bad-name", "name: my job\nrun: x\n", "train.yaml:1: name: must be 1-63"),
    ("int-name", "name: 2024\nrun: x\n", "train.yaml:1: name: must be a string, got 2024"),
    ("bad-on-finish", MINIMAL + "on_finish: terminat\n",
     "train.yaml:3: on_finish: must be one of terminate, stop, keep, got 'terminat' — did you mean 'terminate'?"),
    ("bad-on-finish-no-guess", MINIMAL + "on_finish: explode\n",
     "train.yaml:3: on_finish: must be one of terminate, stop, keep, got 'explode'"),
    ("bad-duration", GRD + "max_runtime: 2 hours\n", "train.yaml:4: guards.max_runtime: must be minutes"),
    ("fractional-duration", GRD + "max_runtime: 1.5h\n", "train.yaml:4: guards.max_runtime: must be minutes"),
    ("zero-duration", GRD + "max_runtime: 0m\n", "train.yaml:4: guards.max_runtime: must be longer than 0"),
    ("negative-duration", GRD + "max_runtime: -5\n", "train.yaml:4: guards.max_runtime: must be longer than 0"),
    ("no-runtime-limit", GRD + "max_runtime: none\n", "train.yaml:4: guards.max_runtime: a runtime limit is required"),
    ("off-runtime-limit", GRD + "max_runtime: off\n", "train.yaml:4: guards.max_runtime: a runtime limit is required"),
    ("null-runtime-limit", GRD + "max_runtime:\n", "train.yaml:4: guards.max_runtime: a runtime limit is required"),
    ("zero-idle", GRD + "idle_minutes: 0\n", "train.yaml:4: guards.idle_minutes: must be longer than 0"),
    ("bad-env-name", MINIMAL + "env:\n  EPOCHS: 3\n  1BAD: x\n", "train.yaml:5: env.1BAD: variable names must be"),
    ("dash-env-name", MINIMAL + "env:\n  MY-VAR: x\n", "train.yaml:4: env.MY-VAR: variable names must be"),
    ("list-env-value", MINIMAL + "env:\n  X: [1, 2]\n", "train.yaml:4: env.X: must be a string or number, got a list"),
    ("null-env-value", MINIMAL + "env:\n  X:\n", "train.yaml:4: env.X: must be a string or number, got null"),
    ("env-list", MINIMAL + "env: [A, B]\n", "train.yaml:3: env: must be a mapping, got a list"),
    ("bad-date", MINIMAL + "env: {D: !!timestamp 2001-13-99}\n", "train.yaml:3: env.D: invalid value"),
    ("missing-workdir", MINIMAL + "workdir: ./no-such-folder\n",
     "train.yaml:3: workdir: folder './no-such-folder' does not exist"),
    ("bad-provider", MINIMAL + "providers: [aws, 3]\n", "train.yaml:3: providers[1]: must be a string, got 3"),
    ("unsafe-tag", MINIMAL + "resources: !!python/object:os.system {}\n",
     "train.yaml:3: resources: unsupported YAML tag"),
    ("top-level-list", "- name: x\n- run: y\n", "train.yaml:1: the top level must be a mapping"),
    ("top-level-scalar", "just a string\n", "train.yaml:1: the top level must be a mapping"),
    ("empty", "", "train.yaml:1: the spec is empty"),
    ("comment-only", "# only a comment\n", "train.yaml:1: the spec is empty"),
]


@pytest.mark.parametrize(("text", "prefix"), [pytest.param(t, p, id=i) for i, t, p in ERROR_CASES])
def test_errors_name_file_line_and_field(text: str, prefix: str, tmp_path: Path) -> None:
    message = error_of(text, base_dir=tmp_path)
    assert message.startswith(prefix), message


def test_unknown_gpu_message_is_exact() -> None:
    text = "name: x\nrun: y\nresources:\n  cpus: 4\n  memory_gb: 8\n  disk_gb: 50\n  gpu: V1OO\n"
    assert error_of(text) == "train.yaml:7: resources.gpu: unknown GPU model 'V1OO' — did you mean V100?"


def test_unknown_gpu_without_guess_lists_models() -> None:
    message = error_of(MINIMAL + "resources:\n  gpu: QQQQQQQQQ\n")
    assert "known models: " in message and "V100" in message and "'any'" in message


def test_workdir_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    assert error_of(MINIMAL + "workdir: notes.txt\n", base_dir=tmp_path).startswith(
        "train.yaml:3: workdir: 'notes.txt' is not a folder"
    )


def test_load_spec_missing_file_names_path(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(SpecError, match="nope.yaml: cannot read job spec"):
        load_spec(path)


def test_load_spec_uses_path_in_messages(tmp_path: Path) -> None:
    path = tmp_path / "train.yaml"
    path.write_text("name: x\nrun: y\nguards:\n  budget_usd: -1\n")
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert info.value.message.startswith(f"{path}:4: guards.budget_usd: ")


def test_load_spec_accepts_bom(tmp_path: Path) -> None:
    path = tmp_path / "train.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + MINIMAL.encode())
    assert load_spec(path).name == "mnist"


def test_load_spec_rejects_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "train.yaml"
    path.write_bytes(b"name: caf\xe9\nrun: x\n")
    with pytest.raises(SpecError, match="not UTF-8"):
        load_spec(path)


# -- storage round trip ---------------------------------------------------


@pytest.mark.parametrize("name", ["local-smoke", "v100-single", "a100x8"])
def test_round_trip_through_json(name: str) -> None:
    spec = load_spec(EXAMPLES / f"{name}.yaml")
    stored = json.loads(json.dumps(spec_to_dict(spec)))
    assert spec_from_dict(stored) == spec


def test_round_trip_of_defaults_and_any_gpu() -> None:
    spec = parse(MINIMAL + "resources:\n  gpu: any:2\nguards:\n  idle_minutes: off\n")
    d = spec_to_dict(spec)
    assert d["resources"]["gpu"] == {"model": None, "count": 2, "min_memory_gb": None}
    assert spec_from_dict(json.loads(json.dumps(d))) == spec


def test_spec_from_dict_ignores_unknown_keys_and_rejects_garbage() -> None:
    d = spec_to_dict(parse(MINIMAL))
    d["added_in_v2"] = 1
    d["guards"]["future_guard"] = 3
    assert spec_from_dict(d).name == "mnist"
    with pytest.raises(SpecError):
        spec_from_dict({"run": "x"})
    with pytest.raises(SpecError):
        spec_from_dict({**d, "on_finish": "explode"})
