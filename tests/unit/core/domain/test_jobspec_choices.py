"""Our spec's GPU ranges, vendor, ``alternatives`` and ``choose`` (the form the importers write)."""

from __future__ import annotations

import json
import textwrap

import pytest

from workbench.core.domain.errors import SpecError
from workbench.core.domain.jobspec import parse_spec, spec_from_dict, spec_to_dict
from workbench.core.domain.jobspec_choices import describe_alternative, describe_gpu
from workbench.core.domain.models import CHOOSE_CHEAPEST, CHOOSE_IN_ORDER, Alternative, GpuRequest
from workbench.core.domain.spec_yaml import spec_to_yaml

BASE = "name: job\nrun: python train.py\n"


def parse(text: str):
    return parse_spec(BASE + textwrap.dedent(text), source="t.yaml")


@pytest.mark.parametrize("gpu, expected", [
    ("H100:1..2", GpuRequest("H100", 1, max_count=2)),
    ("any:2..", GpuRequest(None, 2)),
    ("'A100:8..8'", GpuRequest("A100", 8, max_count=8)),
    ("{model: any, count: 2, min_memory_gb: 24, max_memory_gb: 40}", GpuRequest(None, 2, 24.0, max_memory_gb=40.0)),
    ("{vendor: nvidia, count: 1, max_count: 8}", GpuRequest(None, 1, max_count=8, vendor="NVIDIA")),
])
def test_gpu_ranges_and_vendor(gpu, expected):
    assert parse(f"resources:\n  gpu: {gpu}\n").resources.gpu == expected


def test_alternatives_and_choose_round_trip_through_the_store_and_our_yaml():
    spec = parse("""
        resources:
          gpu: V100:1
          spot: true
        alternatives:
          - {gpu: A100:1, provider: AWS, region: us-east-1}
          - {instance_type: p3.2xlarge, spot: false}
          - {gpu: {model: any, count: 2, min_memory_gb: 24, vendor: amd}}
        choose: in_order
    """)
    assert spec.alternatives == (Alternative(GpuRequest("A100", 1), provider="aws", region="us-east-1"),
                                 Alternative(instance_type="p3.2xlarge", spot=False),
                                 Alternative(GpuRequest(None, 2, 24.0, vendor="AMD")))
    assert spec.choose == CHOOSE_IN_ORDER
    assert spec_from_dict(json.loads(json.dumps(spec_to_dict(spec)))) == spec
    assert parse_spec(spec_to_yaml(spec), source="t.yaml") == spec


def test_a_stored_spec_from_before_alternatives_reads_as_none():
    d = spec_to_dict(parse("resources: {gpu: V100:2}\n"))
    assert d["resources"]["gpu"] == {"model": "V100", "count": 2, "min_memory_gb": None}  # unchanged shape
    for key in ("alternatives", "choose"):
        d.pop(key)
    spec = spec_from_dict(d)
    assert spec.alternatives == () and spec.choose == CHOOSE_CHEAPEST


@pytest.mark.parametrize("text, message", [
    ("alternatives: {gpu: V100}\n", "t.yaml:3: alternatives: must be a list"),
    ("alternatives: [{}]\n", "alternatives[0]: an alternative needs at least one of"),
    ("alternatives: [{gpu: V100}, {gpu: V100}]\n", "alternatives[1]: repeats alternative 0"),
    ("alternatives: [{gpus: V100}]\n", "alternatives[0].gpus: unknown field — did you mean 'gpu'?"),
    ("alternatives: [{spot: maybe}]\n", "alternatives[0].spot: must be true or false"),
    ("choose: in_order\n", "choose: only a spec with alternatives chooses between them"),
    ("alternatives: [{gpu: V100}]\nchoose: fastest\n", "choose: must be one of cheapest, in_order"),
    ("resources: {gpu: 'V100:3..2'}\n", "GPU count must be a whole number from 1 to 64, got '3..2'"),
    ("resources: {gpu: {model: V100, count: 4, max_count: 2}}\n", "max_count: must be a whole number from 4 to 64"),
    ("resources: {gpu: {min_memory_gb: 40, max_memory_gb: 24}}\n", "must be at least min_memory_gb (40)"),
    ("resources: {gpu: {vendor: acme}}\n", "unknown GPU vendor 'acme'"),
])
def test_bad_choices_name_the_line_and_field(text, message):
    with pytest.raises(SpecError) as info:
        parse(text)
    assert message in info.value.message


def test_descriptions_for_the_plan():
    assert describe_gpu(GpuRequest("H100", 1, max_count=2)) == "1-2× H100"
    assert describe_gpu(GpuRequest(None, 2, 24.0, max_memory_gb=40.0, vendor="NVIDIA")) == "2× any NVIDIA GPU 24-40 GB"
    assert describe_alternative(Alternative(GpuRequest("V100", 1), "aws", "us-east-1", "p3.2xlarge", True)) == \
        "1× V100, p3.2xlarge, on aws/us-east-1, spot"


@pytest.mark.parametrize("script", [
    "\n  indented after a blank line\nx", "  indented first line\n  more\n", "trailing spaces  \ntab\t\n",
    "x\n\n\n", "no newline at the end\nend", "# a comment\nkey: value\n- item\n", "a\n\n   \n b", "one line\n",
    "'single' and \"double\" quotes\n",
])
def test_our_yaml_keeps_every_script_exactly(script):
    from workbench.core.domain.models import JobSpec

    spec = JobSpec(name="t", run=script, setup=script, env={"A": "1e-3", "B": "true", "C": "a: b # c"},
                   source="t.yaml")
    assert parse_spec(spec_to_yaml(spec), source="t.yaml") == spec
