"""The spec's `image:` and `ports:` (issue 34): what is read, what is refused with the field and line, the stored
form and the YAML written back (`workbench convert`) reading the same."""

from __future__ import annotations

import pytest

from workbench.core.domain.errors import SpecError
from workbench.core.domain.jobspec import parse_spec, spec_from_dict, spec_to_dict
from workbench.core.domain.models import ContainerImage, Port, RegistryAuth
from workbench.core.domain.spec_yaml import spec_to_yaml

BASE = "name: t\nrun: python train.py\n"


def test_an_image_by_name_and_by_mapping_and_ports():
    s = parse_spec(BASE + "secrets: [REG]\nimage: {name: 'localhost:5000/team/train:1.2', registry_auth: "
                   "{username: bot, password: REG}, shm_size: 8g, user: '1000:1000'}\n"
                   "ports: [8888, {port: 6006, name: TensorBoard}, {port: 9000, node: all}]\n")
    assert s.image == ContainerImage("localhost:5000/team/train:1.2", RegistryAuth("bot", "REG"), "8g", "1000:1000")
    assert s.image.registry == "localhost:5000"
    assert s.ports == (Port(8888), Port(6006, "tensorboard"), Port(9000, None, "all"))
    assert spec_from_dict(spec_to_dict(s)) == s
    again = parse_spec(spec_to_yaml(s))
    assert (again.image, again.ports) == (s.image, s.ports)
    plain = parse_spec(BASE + "image: nvcr.io/nvidia/pytorch:24.05-py3\n")
    assert plain.image == ContainerImage("nvcr.io/nvidia/pytorch:24.05-py3") and plain.image.registry == "nvcr.io"
    assert ContainerImage("pytorch/pytorch:2.3.0").registry == "docker.io"
    digest = "ghcr.io/org/img@sha256:" + "a" * 64
    assert parse_spec(BASE + f"image: '{digest}'\n").image.name == digest
    assert "image: nvcr.io/nvidia/pytorch:24.05-py3" in spec_to_yaml(plain)


@pytest.mark.parametrize("field, why", [
    ("image: 'UPPER/x'", "not an image reference"),
    ("image: {registry_auth: {username: u, password: P}}", "image.name: required"),
    ("secrets: [P]\nimage: {name: a/b, registry_auth: {username: u}}", "registry_auth.password: required"),
    ("image: {name: a/b, registry_auth: {username: u, password: NOPE}}", "add 'NOPE' to secrets"),
    ("image: {name: a/b, shm_size: lots}", "image.shm_size: must be a size"),
    ("image: {name: a/b, user: 'root user'}", "image.user"),
    ("image: {name: a/b, tag: x}", "image"),
    ("ports: 8888", "must be a list of ports"),
    ("ports: [70000]", "ports[0]"),
    ("ports: [8888, 8888]", "listed twice"),
    ("ports: [{name: jupyter}]", "ports[0].port: required"),
    ("ports: [{port: 1, node: some}]", "ports[0].node"),
])
def test_bad_images_and_ports_are_refused_with_their_field(field, why):
    with pytest.raises(SpecError, match=None) as got:
        parse_spec(BASE + field + "\n", source="job.yaml")
    assert why in str(got.value) and "job.yaml:" in str(got.value)


def test_a_launch_with_an_image_and_ports_is_no_longer_refused(monkeypatch):
    """Containers run (workbench/core/remote/container.py; Local: plugins/workbench_local/containers.py) and
    ports are forwarded (workbench/core/remote/forwards.py): nothing this version reads is refused any more."""
    from workbench.core.domain.errors import ConfigError
    from workbench.core.lifecycle.launcher import NOT_YET, refuse_unsupported

    spec = parse_spec(BASE + "resources: {gpu: 'V100:1'}\nimage: pytorch/pytorch:2.3.0\nports: [8888]\n")
    refuse_unsupported(spec)
    assert "image" not in NOT_YET and "ports" not in NOT_YET
    # storage mounts and recovery in a container: the agent runs on the machine around it (docs/containers.md)
    refuse_unsupported(parse_spec(BASE + "image: debian:12\nstorage: [{path: /data, source: 's3://bucket/data'}]\n"
                                  "recovery: {max_restarts: 1}\n"))
    # but not a mount under ~: the machine's home is not the container's
    with pytest.raises(ConfigError, match=r"a storage mount under ~ \(~/data\) together with a container image"):
        refuse_unsupported(parse_spec(BASE + "image: debian:12\nstorage: [{path: ~/data, source: 's3://bucket/d'}]\n"))
    # the gate stays for the next field read before the app can honour it
    monkeypatch.setitem(NOT_YET, "image", "running a job in a container image")
    with pytest.raises(ConfigError, match="cannot do yet"):
        refuse_unsupported(spec)
