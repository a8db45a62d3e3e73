"""Container images and ports of SkyPilot and dstack files → the spec's ``image`` and ``ports``.

SkyPilot: ``resources.image_id: docker:REF`` with the login in ``envs`` (``SKYPILOT_DOCKER_USERNAME``,
``SKYPILOT_DOCKER_PASSWORD``, ``SKYPILOT_DOCKER_SERVER``; SkyPilot puts the server in front of an image that
does not name it), and ``resources.ports`` (``8888``, ``"8888"``, ``"10000-10010"`` or a list of them).
dstack: ``image``, ``registry_auth`` (``username``, ``password``), ``user``, ``resources.shm_size`` and
``ports`` (``8080``, ``"8080"``, ``"LOCAL:CONTAINER"``).

A registry password is never written in a spec: it becomes a launch secret (asked for at launch, never
stored); a password written in the file as text is refused.  Both tools open ports to the Internet (SkyPilot)
or forward them to ``localhost`` (dstack); here every port is forwarded over SSH to 127.0.0.1 only.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from workbench.core.domain.importers.base import ImportReader
from workbench.core.domain.jobspec_container import ContainerReader
from workbench.core.domain.models import ContainerImage, Port, RegistryAuth

#: at most this many ports per job (a SkyPilot range such as 10000-10010 counts each port)
MAX_PORTS = 100
DOCKER_USER, DOCKER_PASSWORD, DOCKER_SERVER = ("SKYPILOT_DOCKER_USERNAME", "SKYPILOT_DOCKER_PASSWORD",
                                               "SKYPILOT_DOCKER_SERVER")
DOCKER_LOGIN = (DOCKER_USER, DOCKER_PASSWORD, DOCKER_SERVER)
_DOCKER_HUB = ("docker.io", "index.docker.io", "registry-1.docker.io")
_FORWARD = "forwarded over SSH to 127.0.0.1 on this computer (the same port, another when it is taken)"
_SERVICES = (("jupyter", 8888), ("tensorboard", 6006))  # named when the commands start them (default port)
_REF = re.compile(r"\$\{\{\s*(secrets|env)\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class ContainerFields(ContainerReader, ImportReader):
    """Mixed into both importers: the image reference check of our own spec reader, and the notes."""

    # -- shared ------------------------------------------------------------------------
    def image_ref(self, node: Node, path: str, text: str) -> str:
        """``text`` as an image reference (our spec's rule; SkyPilot's ``docker:`` prefix dropped)."""
        return self._reference(ScalarNode("tag:yaml.org,2002:str", text, node.start_mark, node.end_mark), path)

    def one_port(self, node: Node, path: str, value: Any) -> int:
        try:
            port = int(str(value).strip())
        except ValueError:
            self.fail(node, path, f"'{value}' is not a port number")
        if not 1 <= port <= 65535:
            self.fail(node, path, f"a port is from 1 to 65535, got {port}")
        return port

    def add_ports(self, ports: list[int], out: list[Port]) -> None:
        for port in ports:
            if not any(p.port == port for p in out):
                out.append(Port(port))

    def renote(self, field: str, detail: str, target: str) -> None:
        """Say again what became of ``field`` (a login variable first read as an env, then taken by the image)."""
        for i, n in enumerate(self.notes):
            if n.field == field:
                self.notes[i] = dataclasses.replace(n, detail=detail, target=target)

    def name_ports(self, field: str, ports: tuple[Port, ...], *scripts: str | None) -> tuple[Port, ...]:
        """Ports the job's own commands serve Jupyter or TensorBoard on get that name (the app knows how to open
        them); the note on ``field`` says which."""
        text = "\n".join(s for s in scripts if s)
        out, named = [], []
        for p in ports:
            name = next((svc for svc, default in _SERVICES if svc in text.lower()
                         and (re.search(rf"\b{p.port}\b", text) or p.port == default)), None)
            if name and not any(q.name == name for q in out):
                p = dataclasses.replace(p, name=name)
                named.append(f"{p.port} is {name} (the commands start it)")
            out.append(p)
        if named:
            for i, n in enumerate(self.notes):
                if n.field == field:
                    self.notes[i] = dataclasses.replace(n, detail=f"{n.detail}; {', '.join(named)}")
        return tuple(out)

    # -- SkyPilot ----------------------------------------------------------------------
    def sky_ports(self, key: Node, node: Node) -> tuple[Port, ...]:
        """``resources.ports`` (``key`` its name, ``node`` its value): 8888, "8888", "10000-10010", or a list."""
        path = "resources.ports"
        items = node.value if isinstance(node, SequenceNode) else [node]
        out: list[Port] = []
        for item in items:
            text = self.text(item, path).strip()
            low, dash, high = text.partition("-")
            first = self.one_port(item, path, low)
            last = self.one_port(item, path, high) if dash else first
            if last < first:
                self.fail(item, path, f"the range '{text}' is backwards")
            if last - first + 1 + len(out) > MAX_PORTS:
                self.refused(item, path, f"'{text}' asks for {last - first + 1} ports: each port is forwarded "
                                         f"over SSH here, at most {MAX_PORTS} per job — list the ports the job "
                                         "serves on")
                return ()
            self.add_ports(list(range(first, last + 1)), out)
        if out:
            listed = ", ".join(str(p.port) for p in out)
            self.mapped(key, path, f"ports: {listed} — {_FORWARD}; SkyPilot opens them to the Internet, here "
                                    "nothing is opened to the Internet", "ports")
        return tuple(out)

    def sky_image(self, node: Node, ref: str, env: dict[str, str], secrets: tuple[str, ...],
                  had_password: bool) -> tuple[ContainerImage | None, tuple[str, ...]]:
        """``image_id: docker:REF`` with SkyPilot's docker login variables → (image, the spec's secrets).

        ``env`` still holds the login variables written in ``envs`` (they are taken out of it);
        ``had_password``: the password was written in ``envs`` with a value (not used).
        """
        path = "resources.image_id"
        name = self.image_ref(node, path, ref)
        given = [k for k in DOCKER_LOGIN if k in env or k in secrets]
        if not given:
            self.mapped(node, path, f"image: {name} (setup and run happen in this container, pulled without a "
                                    "login)", "image")
            return ContainerImage(name), secrets
        missing = [k for k in (DOCKER_USER, DOCKER_SERVER) if k not in given]
        if missing:  # the password alone may come at launch (SkyPilot's advice: `--env SKYPILOT_DOCKER_PASSWORD`)
            self.fail(node, path, f"SkyPilot's docker login needs {DOCKER_USER} and {DOCKER_SERVER} in envs (and "
                                  f"{DOCKER_PASSWORD}, here asked for at launch); {', '.join(missing)} missing")
        for key in (DOCKER_USER, DOCKER_SERVER):
            if key not in env:
                self.refused(node, f"envs.{key}", "has no value in the file: the registry user and server are "
                                                  "written in the spec here, give them in envs")
                return None, secrets
        user, server = env.pop(DOCKER_USER).strip(), env.pop(DOCKER_SERVER).strip().rstrip("/")
        env.pop(DOCKER_PASSWORD, None)
        self.renote(f"envs.{DOCKER_USER}", f"image.registry_auth.username: {user} (SkyPilot's docker login)", "image")
        self.renote(f"envs.{DOCKER_SERVER}", f"the registry of the image: {server} (SkyPilot's docker login)",
                    "image")
        self.renote(f"envs.{DOCKER_PASSWORD}", f"secret {DOCKER_PASSWORD}, the registry password: "
                    + ("the value written in the file is not used — " if had_password else "")
                    + "asked for at launch, never stored", "secrets")
        image = ContainerImage(name)
        if server.lower() in _DOCKER_HUB and image.registry == "docker.io":
            how = "Docker Hub, as the image names"
        elif name.startswith(server + "/"):
            how = f"{server}, as the image names"
        elif image.registry == "docker.io" and not name.startswith("docker.io/"):
            name = self.image_ref(node, path, f"{server}/{name}")
            how = f"{server}, put in front of the image as SkyPilot does"
        else:
            self.fail(node, path, f"the image names registry {image.registry} but {DOCKER_SERVER} is {server}: "
                                  f"SkyPilot would pull {server}/{name}; make them agree")
        if DOCKER_PASSWORD not in secrets:
            secrets = (*secrets, DOCKER_PASSWORD)
        kept = (" (the value written in envs is not used: give it at launch, e.g. --env "
                f"{DOCKER_PASSWORD}=\"$(aws ecr get-login-password)\")" if had_password else "")
        self.mapped(node, path, f"image: {name}, logged in to {how} as {user} with the password in launch secret "
                                f"{DOCKER_PASSWORD}{kept}: asked for at launch, never stored", "image")
        return ContainerImage(name, RegistryAuth(user, DOCKER_PASSWORD)), secrets

    # -- dstack ------------------------------------------------------------------------
    def dstack_image(self, f: dict[str, tuple[Node, Node]], env: dict[str, str], secrets: tuple[str, ...],
                     shm: tuple[Node, float] | None) -> tuple[ContainerImage | None, tuple[str, ...]]:
        """``image``, ``registry_auth``, ``user`` and ``resources.shm_size`` (given as (node, GB))."""
        def given(key: str) -> Node | None:
            return f[key][1] if key in f and not self.is_null(f[key][1]) else None

        node = given("image")
        if node is None:
            if (n := given("registry_auth")) is not None:
                self.fail(n, "registry_auth", "a registry login needs an image: add `image:`")
            if (n := given("user")) is not None:
                self.ignored(n, "user", "no image: the job runs on the machine as its user")
            if shm is not None:
                self.ignored(shm[0], "resources.shm_size", "no image: the job runs on the machine, whose /dev/shm "
                                                           "is half its memory")
            return None, secrets
        name = self.image_ref(node, "image", self.string(node, "image").strip())
        self.mapped(node, "image", f"image: {name} (setup and run happen in this container)", "image")
        auth = None
        if (n := given("registry_auth")) is not None:
            auth, secrets = self.registry_auth(n, name, env, secrets)
        user = None
        if (n := given("user")) is not None:
            user = str(self.scalar(n, "user", "a user, uid or uid:gid")).strip()
            self.mapped(n, "user", f"image.user: {user} (setup and run happen as this user in the container)",
                        "image")
        shm_size = None
        if shm is not None:
            shm_size = _docker_size(shm[1])
            self.mapped(shm[0], "resources.shm_size", f"image.shm_size: {shm_size} (the container's /dev/shm)",
                        "image")
        return ContainerImage(name, auth, shm_size, user), secrets

    def registry_auth(self, node: Node, image: str, env: dict[str, str],
                      secrets: tuple[str, ...]) -> tuple[RegistryAuth | None, tuple[str, ...]]:
        f = self.mapping(node, "registry_auth", ("username", "password"))
        for key in ("username", "password"):
            if key not in f:
                self.fail(node, f"registry_auth.{key}", "required")
        user_node, pass_node = f["username"][1], f["password"][1]
        user_text = self.text(user_node, "registry_auth.username").strip()
        ref = _REF.fullmatch(user_text)
        if ref and ref.group(1) == "env" and ref.group(2) in env:
            user_text = env[ref.group(2)]
        elif ref:
            self.refused(user_node, "registry_auth.username", f"'{user_text}' is filled at launch in dstack: the "
                                                              "registry user is written in the spec here, give it "
                                                              "in the file")
            return None, secrets
        pass_text = self.text(pass_node, "registry_auth.password").strip()
        ref = _REF.fullmatch(pass_text)
        if ref is None:
            self.refused(pass_node, "registry_auth.password", "a password written in the file would be written in "
                                                              "the spec: give it as ${{ secrets.NAME }} (asked for "
                                                              "at launch here, never stored)")
            return None, secrets
        kind, secret = ref.groups()
        if kind == "env" and secret not in secrets:
            if secret in env:
                self.refused(pass_node, "registry_auth.password", f"env {secret} holds the password as text in the "
                                                                  "file: list it without a value (asked for at "
                                                                  "launch) or use ${{ secrets.NAME }}")
                return None, secrets
            self.fail(pass_node, "registry_auth.password", f"names env {secret}, which env does not list")
        if secret not in secrets:
            secrets = (*secrets, secret)
        self.mapped(node, "registry_auth", f"image.registry_auth: {user_text} at {ContainerImage(image).registry}, "
                                           f"the password in launch secret {secret} (asked for at launch, never "
                                           "stored)", "image")
        return RegistryAuth(user_text, secret), secrets

    def dstack_ports(self, key: Node, node: Node) -> tuple[Port, ...]:
        """``ports``: 8080, "8080", "LOCAL:CONTAINER" ("*:8080"), or {container_port, local_port}."""
        items = node.value if isinstance(node, SequenceNode) else [node]
        out: list[Port] = []
        locals_: list[str] = []
        for i, item in enumerate(items):
            path = f"ports[{i}]"
            if isinstance(item, MappingNode):
                f = self.mapping(item, path, ("container_port", "local_port"))
                if "container_port" not in f:
                    self.fail(item, f"{path}.container_port", "required")
                port = self.one_port(item, path, self.text(f["container_port"][1], path))
                local = self.text(f["local_port"][1], path).strip() if "local_port" in f else ""
            else:
                local, colon, remote = self.text(item, path).strip().rpartition(":")
                port = self.one_port(item, path, remote)
            if local and local not in ("*", str(port)):
                locals_.append(f"{local}→{port}")
            if len(out) >= MAX_PORTS:
                self.refused(item, path, f"at most {MAX_PORTS} ports per job")
                return ()
            self.add_ports([port], out)
        listed = ", ".join(str(p.port) for p in out)
        more = (f"; dstack's local ports ({', '.join(locals_)}) are not kept: the machine's port is what counts, "
                "the local one is chosen when forwarding") if locals_ else ""
        self.mapped(key, "ports", f"ports: {listed} (the port in the container, on the head node) — {_FORWARD}"
                    + more, "ports")
        return tuple(out)


def _docker_size(gb: float) -> str:
    """GB → Docker's --shm-size text ("24g", "512m")."""
    if gb == int(gb):
        return f"{int(gb)}g"
    return f"{max(1, round(gb * 1024))}m"
