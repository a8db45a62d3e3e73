"""The job spec's ``image:`` and ``ports:`` fields: the container a job runs in, and the ports the app forwards.

    image: nvcr.io/nvidia/pytorch:24.05-py3            # a name: registry/name:tag, or …@sha256:<64 hex>
    image:                                             # or a mapping
      name: registry.example.com/team/train:1.2
      registry_auth: {username: bot, password: REGISTRY_TOKEN}   # password: a name listed in `secrets`,
                                                       # or `keyring` (saved by `workbench registry login HOST`)
      shm_size: 16g                                    # /dev/shm (PyTorch data loaders need more than 64 MB)
      user: "1000:1000"                                # who setup and run are inside the container
    ports: [8888, {port: 6006, name: tensorboard}, {port: 8000, node: all}]

A registry password is never written in a spec: ``registry_auth.password`` names one of the spec's
``secrets``, whose value is asked for at launch like every secret, or is ``keyring``: the password saved in
this computer's keyring for the image's registry (``workbench registry login HOST``), read at launch.  The
readers are mixed into the spec parser (:mod:`.jobspec`); the dict form is what the store keeps.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from workbench.core.domain.models import (PORT_SERVICES, REGISTRY_KEYRING, ContainerImage, Port,  # noqa: F401
                                          RegistryAuth, image_from_dict, image_to_dict, ports_from_list, ports_to_list)
from workbench.core.domain.yaml_reader import NodeReader

# a reference as Docker reads it: [registry[:port]/]path[:tag][@sha256:digest]
# (a first part is a registry only with a dot, a port or as localhost, as Docker reads it)
_REF_RE = re.compile(r"^(?:(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|localhost)(?::[0-9]+)?/|[A-Za-z0-9-]+:[0-9]+/)?[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*"
                     r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$")
_SHM_RE = re.compile(r"^[0-9]+[bkmgBKMG]?$")
_USER_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(?::[A-Za-z0-9_][A-Za-z0-9_.-]*)?$")
#: the same rules, public: the wizard's image fields check what they take with them (one rule for a spec and a form)
REFERENCE_RE, SHM_SIZE_RE, USER_RE = _REF_RE, _SHM_RE, _USER_RE
_IMAGE_KEYS = ("name", "registry_auth", "shm_size", "user")
_PORT_KEYS = ("port", "name", "node")


class ContainerReader(NodeReader):
    """Readers for ``image`` and ``ports``."""

    def image(self, node: Node | None, secrets: tuple[str, ...]) -> ContainerImage | None:
        if node is None or self.is_null(node):
            return None
        if isinstance(node, ScalarNode):
            return ContainerImage(self._reference(node, "image"))
        f = self.mapping(node, "image", _IMAGE_KEYS)
        if "name" not in f:
            self.fail(node, "image.name", "required: the image, e.g. nvcr.io/nvidia/pytorch:24.05-py3")
        name = self._reference(f["name"][1], "image.name")
        auth = self._auth(f["registry_auth"][1], secrets) if "registry_auth" in f else None
        shm = None
        if "shm_size" in f and not self.is_null(f["shm_size"][1]):
            shm = str(self.scalar(f["shm_size"][1], "image.shm_size", "a size like 16g"))
            if not _SHM_RE.fullmatch(shm):
                self.fail(f["shm_size"][1], "image.shm_size", f"must be a size like 16g or 512m, got '{shm}'")
        user = None
        if "user" in f and not self.is_null(f["user"][1]):
            user = str(self.scalar(f["user"][1], "image.user", "a user, uid or uid:gid"))
            if not _USER_RE.fullmatch(user):
                self.fail(f["user"][1], "image.user", f"must be a user name, a uid or uid:gid, got '{user}'")
        return ContainerImage(name, auth, shm, user)

    def _reference(self, node: Node, path: str) -> str:
        text = self.string(node, path).strip()
        if text.startswith("docker:"):  # SkyPilot's image_id spelling, taken here too
            text = text[len("docker:"):]
        if not _REF_RE.fullmatch(text):
            self.fail(node, path, f"'{text}' is not an image reference (registry/name:tag or name@sha256:…)")
        return text

    def _auth(self, node: Node, secrets: tuple[str, ...]) -> RegistryAuth | None:
        if self.is_null(node):
            return None
        f = self.mapping(node, "image.registry_auth", ("username", "password"))
        for key in ("username", "password"):
            if key not in f:
                self.fail(node, f"image.registry_auth.{key}", "required")
        user = self.string(f["username"][1], "image.registry_auth.username")
        secret = self.string(f["password"][1], "image.registry_auth.password")
        if secret != REGISTRY_KEYRING and secret not in secrets:
            self.fail(f["password"][1], "image.registry_auth.password",
                      f"names the launch secret that holds the password or token; add '{secret}' to secrets "
                      "(its value is asked for at launch and never stored), or say `keyring` for the password "
                      "saved by `workbench registry login HOST`")
        return RegistryAuth(user, secret)

    def ports(self, node: Node | None) -> tuple[Port, ...]:
        if node is None or self.is_null(node):
            return ()
        if not isinstance(node, SequenceNode):
            self.fail(node, "ports", f"must be a list of ports, e.g. [8888, {{port: 6006, name: tensorboard}}], "
                                     f"got {self.describe(node)}")
        out: list[Port] = []
        for i, item in enumerate(node.value):
            path = f"ports[{i}]"
            if isinstance(item, MappingNode):
                f = self.mapping(item, path, _PORT_KEYS)
                if "port" not in f:
                    self.fail(item, f"{path}.port", "required")
                port = self.integer(f["port"][1], f"{path}.port", 1, 65535)
                name = self.string(f["name"][1], f"{path}.name").strip().lower() if "name" in f else None
                node_of = self.choice_of(f["node"][1], f"{path}.node", ("head", "all")) if "node" in f else "head"
            else:
                port, name, node_of = self.integer(item, path, 1, 65535), None, "head"
            if name is not None and not (name in PORT_SERVICES or re.fullmatch(r"[a-z0-9][a-z0-9 _.-]{0,31}", name)):
                self.fail(item, f"{path}.name", f"must be one of {', '.join(PORT_SERVICES)} or a short label")
            if any(p.port == port for p in out):
                self.fail(item, path, f"port {port} is listed twice")
            out.append(Port(port, name or None, node_of))
        return tuple(out)

    def choice_of(self, node: Node, path: str, allowed: tuple[str, ...]) -> str:
        value = self.string(node, path)
        if value not in allowed:
            self.fail(node, path, f"must be one of {', '.join(allowed)}, got '{value}'")
        return value
