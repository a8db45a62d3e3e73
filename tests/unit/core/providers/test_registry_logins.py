"""Registry hosts as logins are keyed, and a keyring login's password in container.sh (issue 34).

The keyring itself (save, read back, refuse) is tested on the real Secret Service in
tests/cli/test_registry_cli.py and tests/plugins/local/test_local_container_keyring.py."""

from __future__ import annotations

import pytest

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.jobspec import parse_spec
from workbench.core.domain.models import REGISTRY_KEYRING_SECRET, ContainerImage, RegistryAuth
from workbench.core.providers.registry_logins import registry_host
from workbench.core.remote import container


@pytest.mark.parametrize("given, host", [
    ("nvcr.io", "nvcr.io"), ("https://GHCR.io/v2/", "ghcr.io"), ("registry.example.com:5000", "registry.example.com:5000"),
    ("127.0.0.1:5000", "127.0.0.1:5000"), ("localhost:5000", "localhost:5000"), ("index.docker.io", "docker.io"),
    ("registry-1.docker.io", "docker.io"), ("docker.io", "docker.io"),
])
def test_registry_hosts_are_keyed_as_images_name_them(given, host):
    assert registry_host(given) == host


@pytest.mark.parametrize("given", ["", "not a host", "bad_host.com", "-x.io", "a.io:port"])
def test_what_is_not_a_host_is_refused(given):
    with pytest.raises(ConfigError, match="is not a registry host"):
        registry_host(given)


def test_an_image_without_a_registry_takes_docker_hubs_login():
    assert registry_host(ContainerImage("pytorch/pytorch:2.3").registry) == "docker.io"


def test_password_keyring_needs_no_secret_and_container_sh_reads_the_one_it_travels_as():
    spec = parse_spec("name: j\nrun: 'true'\nimage:\n  name: ghcr.io/lab/job:1\n"
                      "  registry_auth: {username: bot, password: keyring}\n")
    auth = spec.image.registry_auth
    assert auth == RegistryAuth("bot", "keyring") and auth.from_keyring and spec.secrets == ()
    assert auth.secret_name == REGISTRY_KEYRING_SECRET
    text = container.script(spec.image, "L1", "/job", "/job/work", {"run.sh": "/job/run.sh"})
    assert f"sed -n 's/^{REGISTRY_KEYRING_SECRET}=//p'" in text and "^keyring=" not in text
    # a secret's name still has to be listed in secrets
    with pytest.raises(Exception, match="add 'TOKEN' to secrets"):
        parse_spec("name: j\nrun: 'true'\nimage:\n  name: ghcr.io/lab/job:1\n"
                   "  registry_auth: {username: bot, password: TOKEN}\n")
