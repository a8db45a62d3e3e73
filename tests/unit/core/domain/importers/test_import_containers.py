"""Container images, registry logins and ports of SkyPilot and dstack files, and GPU exactness as each tool
means it (issue 34).  The inline snippets are test inputs written for these tests."""

from __future__ import annotations

import textwrap

import pytest

from workbench.core.domain.errors import SpecError
from workbench.core.domain.importers import MAPPED, import_text
from workbench.core.domain.importers.report import render_converted
from workbench.core.domain.jobspec import parse_spec, spec_from_dict, spec_to_dict
from workbench.core.domain.models import ContainerImage, GpuRequest, Offer, Port, Prices, RegistryAuth
from workbench.core.domain.spec_yaml import spec_to_yaml
from workbench.core.offers.query import OfferQuery, matches

PASSWORD = "hunter2-not-for-the-spec"


def sky(text: str):
    return import_text(textwrap.dedent(text), source="task.yaml")


def dst(body: str):
    return import_text("type: task\n" + textwrap.dedent(body), source="t.dstack.yml")


def round_trips(spec) -> None:
    assert parse_spec(spec_to_yaml(spec), source=spec.source) == spec
    assert spec_from_dict(spec_to_dict(spec)) == spec


def note(result, field: str):
    return next(n for n in result.notes if n.field == field)


# -- SkyPilot: image_id: docker:… and its login ------------------------------------------------


def test_skypilot_docker_image_with_login_puts_the_server_in_front_and_the_password_in_a_secret():
    result = sky(f"""\
        envs:
          SKYPILOT_DOCKER_USERNAME: AWS
          SKYPILOT_DOCKER_PASSWORD: {PASSWORD}
          SKYPILOT_DOCKER_SERVER: 123456789012.dkr.ecr.us-east-1.amazonaws.com
          EPOCHS: 3
        resources:
          image_id: docker:team/train:v1
        run: python train.py
        """)
    spec = result.require_spec()
    assert spec.image == ContainerImage("123456789012.dkr.ecr.us-east-1.amazonaws.com/team/train:v1",
                                        RegistryAuth("AWS", "SKYPILOT_DOCKER_PASSWORD"))
    assert spec.secrets == ("SKYPILOT_DOCKER_PASSWORD",) and spec.env == {"EPOCHS": "3"}
    assert PASSWORD not in repr(spec) + spec_to_yaml(spec) + repr(result.notes)
    image = note(result, "resources.image_id")
    assert "put in front of the image as SkyPilot does" in image.detail and "not used" in image.detail
    assert note(result, "envs.SKYPILOT_DOCKER_PASSWORD").target == "secrets"
    round_trips(spec)


def test_skypilot_docker_password_from_secrets_and_an_image_already_naming_the_server():
    spec = sky("""\
        envs: {SKYPILOT_DOCKER_USERNAME: $oauthtoken, SKYPILOT_DOCKER_SERVER: nvcr.io}
        secrets: {SKYPILOT_DOCKER_PASSWORD: null, HF_TOKEN: null}
        resources: {image_id: 'docker:nvcr.io/nvidia/pytorch:24.07-py3', accelerators: 'H200:8'}
        run: x
        """).require_spec()
    assert spec.image == ContainerImage("nvcr.io/nvidia/pytorch:24.07-py3",
                                        RegistryAuth("$oauthtoken", "SKYPILOT_DOCKER_PASSWORD"))
    assert spec.secrets == ("SKYPILOT_DOCKER_PASSWORD", "HF_TOKEN") and spec.env == {}
    round_trips(spec)


def test_skypilot_docs_ecr_example_without_a_password_in_the_file_asks_for_it_at_launch():
    """SkyPilot's own docs (docker-containers.rst, ECR): user and server in envs, the password given with --env."""
    spec = sky("""\
        resources:
          image_id: docker:my-private-image:v2
        envs:
          SKYPILOT_DOCKER_USERNAME: AWS
          # SKYPILOT_DOCKER_PASSWORD: <password>
          SKYPILOT_DOCKER_SERVER: 123456789012.dkr.ecr.us-east-1.amazonaws.com
        run: python train.py
        """).require_spec()
    assert spec.image == ContainerImage("123456789012.dkr.ecr.us-east-1.amazonaws.com/my-private-image:v2",
                                        RegistryAuth("AWS", "SKYPILOT_DOCKER_PASSWORD"))
    assert spec.secrets == ("SKYPILOT_DOCKER_PASSWORD",) and spec.env == {}


@pytest.mark.parametrize("text, message", [
    ("envs: {SKYPILOT_DOCKER_USERNAME: u, SKYPILOT_DOCKER_PASSWORD: null, SKYPILOT_DOCKER_SERVER: ghcr.io}\n"
     "resources: {image_id: 'docker:nvcr.io/nvidia/pytorch:24.07-py3'}\nrun: x\n",
     "the image names registry nvcr.io but SKYPILOT_DOCKER_SERVER is ghcr.io"),
    ("envs: {SKYPILOT_DOCKER_USERNAME: u}\nresources: {image_id: 'docker:a/b:1'}\nrun: x\n",
     "SKYPILOT_DOCKER_SERVER missing"),
    ("resources: {image_id: 'docker:Not A Ref'}\nrun: x\n", "is not an image reference"),
    ("resources: {ports: 70000}\nrun: x\n", "a port is from 1 to 65535"),
    ("resources: {ports: '9-3'}\nrun: x\n", "the range '9-3' is backwards"),
])
def test_skypilot_bad_image_and_ports(text, message):
    with pytest.raises(SpecError) as info:
        sky(text).require_spec()
    assert message in info.value.message


@pytest.mark.parametrize("ports, expected", [
    ("8888", (8888,)), ("'8888'", (8888,)), ("[8888, '10000-10002']", (8888, 10000, 10001, 10002)),
    ("[6006, 6006]", (6006,)),
])
def test_skypilot_ports_forms(ports, expected):
    result = sky(f"resources:\n  ports: {ports}\nrun: python serve.py\n")
    assert tuple(p.port for p in result.require_spec().ports) == expected
    assert "nothing is opened to the Internet" in note(result, "resources.ports").detail


# -- dstack: image, registry_auth, user, shm_size, ports ---------------------------------------


def test_dstack_image_with_a_secret_login_user_shm_and_port_mappings():
    result = dst("""\
        image: ghcr.io/team/train:2.1
        registry_auth:
          username: bot
          password: ${{ secrets.GHCR_TOKEN }}
        user: "1000:1000"
        env: [HF_TOKEN]
        commands: [jupyter lab --port 8888, tensorboard --logdir runs &]
        ports: [8888, "8080:80", "*:6006", {container_port: 9000, local_port: 19000}]
        resources: {gpu: 'A100:2', shm_size: 16GB}
        """)
    spec = result.require_spec()
    assert spec.image == ContainerImage("ghcr.io/team/train:2.1", RegistryAuth("bot", "GHCR_TOKEN"), "16g", "1000:1000")
    assert spec.secrets == ("HF_TOKEN", "GHCR_TOKEN")
    assert spec.ports == (Port(8888, "jupyter"), Port(80), Port(6006, "tensorboard"), Port(9000))
    ports = note(result, "ports").detail
    assert "8080→80" in ports and "19000→9000" in ports and "127.0.0.1" in ports
    assert note(result, "registry_auth").status == MAPPED and "GHCR_TOKEN" in note(result, "registry_auth").detail
    round_trips(spec)


def test_dstack_registry_password_named_by_an_env_without_a_value_is_a_secret():
    spec = dst("""\
        image: nvcr.io/nim/meta/llama3-8b-instruct:latest
        env: [NGC_API_KEY]
        registry_auth: {username: $oauthtoken, password: '${{ env.NGC_API_KEY }}'}
        commands: [python serve.py]
        """).require_spec()
    assert spec.image.registry_auth == RegistryAuth("$oauthtoken", "NGC_API_KEY") and spec.secrets == ("NGC_API_KEY",)
    round_trips(spec)


def test_dstack_image_without_commands_is_refused_and_shm_without_image_is_ignored():
    result = dst("image: a/b:1\n")
    assert [(n.field, n.line) for n in result.refused] == [("commands", 2)]
    ignored = dst("commands: [x]\nresources: {shm_size: 8GB}\n")
    assert ignored.require_spec().image is None
    assert "/dev/shm" in note(ignored, "resources.shm_size").detail


# -- exactness as each tool means it ------------------------------------------------------------


def offer(model: str, count: int, memory: float) -> Offer:
    return Offer("aws", "us-east-1", f"{model}x{count}", model, count, memory, 96, 768, Prices(on_demand=10.0))


def test_dstack_gpu_memory_and_count_are_exact_and_an_impossible_card_is_said_so():
    result = dst("commands: [x]\nresources:\n  gpu: {name: A6000, memory: 40GB, count: 2}\n")
    spec = result.require_spec()
    assert spec.resources.gpu == GpuRequest("A6000", 2, 40.0, max_count=2, max_memory_gb=40.0)
    gpu = note(result, "resources.gpu").detail
    assert "exactly 2 GPUs and exactly 40 GB per GPU, as dstack does" in gpu
    assert "A6000 ships with 48 GB: this matches no offer" in gpu
    q = OfferQuery.from_spec(spec)
    assert not matches(offer("A6000", 2, 48), q)  # it would run on 48 GB cards if read as "at least"
    exact24 = OfferQuery.from_spec(dst("commands: [x]\nresources: {gpu: 24GB}\n").require_spec())
    assert matches(offer("A10G", 1, 24), exact24)
    assert not matches(offer("A100", 1, 40), exact24) and not matches(offer("A10G", 4, 24), exact24)


def test_skypilot_counts_are_exact_and_our_own_count_stays_at_least():
    imported = sky("resources: {accelerators: 'H200:8'}\nrun: x\n")
    spec = imported.require_spec()
    assert spec.resources.gpu == GpuRequest("H200", 8, max_count=8)
    assert not matches(offer("H200", 16, 141), OfferQuery.from_spec(spec))
    assert matches(offer("H200", 8, 141), OfferQuery.from_spec(spec))
    ours = parse_spec("name: j\nrun: x\nresources: {gpu: 'H200:8'}\n")
    assert ours.resources.gpu == GpuRequest("H200", 8)  # our YAML: at least 8
    assert matches(offer("H200", 16, 141), OfferQuery.from_spec(ours))
    round_trips(spec)


def test_skypilot_default_disk_is_256_gb_and_convert_says_each_reading():
    result = sky("resources: {accelerators: 'H200:8'}\nrun: x\n")
    assert result.require_spec().resources.disk_gb == 256
    text = render_converted(result)
    assert "resources.gpu: 8× H200 — read as exactly 8 (SkyPilot counts are exact)" in text
    assert "resources.disk_size → not given: SkyPilot's default 256 GB → resources.disk_gb: 256" in text
    assert sky("resources: {disk_size: 50}\nrun: x\n").require_spec().resources.disk_gb == 50
    assert sky("envs: {A: 1}\nrun: x\n").require_spec().resources.disk_gb == 256  # no resources at all
