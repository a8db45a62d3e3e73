"""A job's ports forwarded to this computer over the machine's SSH connection (``ports:`` in the spec).

One :class:`Forward` per (machine, port): a listener on **127.0.0.1 only** (the wanted local port, or
another free one when it is taken) whose accepted connections each become a ``direct-tcpip`` channel
of one SSH connection to the machine, to ``127.0.0.1:PORT`` there.  Nothing is opened to the internet:
the machine's firewall (security group, NSG) keeps only SSH.  A connection that drops is opened again
with backoff when the next local connection comes in (a tunnel open at the time ends with it).

:class:`Forwards` is what one process forwards (the CLI's ``workbench open`` until Ctrl+C, the app's
while it runs): ``open`` a launch's port, ``stop`` a launch's forwards, ``close`` them all.  Installed
with :meth:`Forwards.stop_with_teardown`, a teardown that ends a launch's machines stops its forwards.

Threading: every method may be called from any thread (one lock); each listener accepts on its own
daemon thread and each tunnel pumps on its own.  ``open`` connects over SSH: never on a UI thread.
"""

from __future__ import annotations

import logging
import select
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from workbench.core.domain.errors import ConfigError, NotFoundError, TransientError, WorkbenchError
from workbench.core.domain.models import Instance, Port
from workbench.core.domain.cluster import node_rank_of
from workbench.core.remote.connection import Backoff, Connection, Target, connect

log = logging.getLogger("workbench.remote.ports")

LOCAL_HOST = "127.0.0.1"
RECONNECT_DEADLINE_S = 60.0
CHUNK = 65536


def nodes_for(port: Port, instances: list[Instance]) -> list[Instance]:
    """The machines whose ``port`` is forwarded: the head (node rank 0) unless the spec says ``node: all``."""
    ordered = sorted(instances, key=lambda i: (node_rank_of(i.extra), i.instance_id))
    return ordered if port.node == "all" else ordered[:1]


def bind_local(wanted: int) -> socket.socket:
    """A listening socket on 127.0.0.1: port ``wanted`` when it is free, else one the system picks."""
    for port in (wanted, 0):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind((LOCAL_HOST, port))
        except OSError:
            sock.close()
            continue
        sock.listen(16)
        return sock
    raise ConfigError("no free local port on 127.0.0.1")  # pragma: no cover - the system always has one


class _Link:
    """The one SSH connection a machine's forwards share, opened again when it dropped."""

    def __init__(self, target: Target, deadline_s: float, connector: Callable[[Target], Connection]) -> None:
        self.target, self.deadline_s, self._connect = target, deadline_s, connector
        self._conn: Connection | None = None
        self._lock = threading.Lock()
        self.closed = False

    def connection(self) -> Connection:
        """An alive connection: the current one, or a new one (backoff up to ``deadline_s``)."""
        with self._lock:
            if self._conn is not None and self._conn.alive:
                return self._conn
            if self._conn is not None:
                self._conn.close()
                self._conn = None
                log.info("the SSH connection to %s dropped; opening it again", self.target.where)
            backoff, start = Backoff(0.5, 5.0), time.monotonic()
            while True:
                if self.closed:
                    raise TransientError("the forward was stopped")
                try:
                    self._conn = self._connect(self.target)
                    return self._conn
                except TransientError:
                    if time.monotonic() - start > self.deadline_s:
                        raise
                    time.sleep(backoff.next())

    def close(self) -> None:
        self.closed = True
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class Forward:
    """One listener on 127.0.0.1 tunnelling to ``127.0.0.1:remote_port`` on one machine."""

    def __init__(self, launch_id: str, inst: Instance, port: Port, link: _Link) -> None:
        self.launch_id, self.instance, self.port, self._link = launch_id, inst, port, link
        self._sock = bind_local(port.port)
        self.local_port: int = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._tunnels: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, name=f"forward-{launch_id}-{port.port}", daemon=True)
        self._thread.start()

    @property
    def remote_port(self) -> int:
        return self.port.port

    @property
    def node_rank(self) -> int:
        return node_rank_of(self.instance.extra)

    @property
    def alive(self) -> bool:
        return not self._stop.is_set()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, src = self._sock.accept()
            except OSError:
                return  # the listener was closed
            threading.Thread(target=self._tunnel, args=(client, src), daemon=True,
                             name=f"tunnel-{self.launch_id}-{self.remote_port}").start()

    def _tunnel(self, client: socket.socket, src: tuple[str, int]) -> None:
        with self._lock:
            self._tunnels.add(client)
        chan: Any = None
        try:
            for attempt in (1, 2):  # a connection found dead only when the channel fails is opened again once
                try:
                    conn = self._link.connection()
                except WorkbenchError as exc:
                    log.warning("port %d of %s: %s", self.remote_port, self.launch_id, exc)
                    return
                try:
                    chan = conn.transport.open_channel("direct-tcpip", ("127.0.0.1", self.remote_port), src,
                                                       timeout=15)
                    break
                except Exception as exc:  # noqa: BLE001 - paramiko's ChannelException, EOFError, SSHException
                    if attempt == 2 or self._stop.is_set():
                        log.info("port %d of %s: the machine refused the tunnel (%s)", self.remote_port,
                                 self.launch_id, exc)
                        return
                    conn.transport.close()
            _pump(client, chan, self._stop)
        finally:
            if chan is not None:
                chan.close()
            client.close()
            with self._lock:
                self._tunnels.discard(client)

    def stop(self) -> None:
        """Stop listening and end the open tunnels (idempotent)."""
        self._stop.set()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the accept (a close alone leaves it listening)
        except OSError:
            pass
        self._sock.close()
        self._thread.join(5)
        with self._lock:
            for s in list(self._tunnels):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def _pump(client: socket.socket, chan: Any, stop: threading.Event) -> None:
    """Copy bytes both ways until either side closes."""
    while not stop.is_set():
        try:
            ready, _, _ = select.select([client, chan], [], [], 1.0)
        except (OSError, ValueError):
            return
        for src, dst in ((client, chan), (chan, client)):
            if src in ready:
                try:
                    data = src.recv(CHUNK)
                except OSError:
                    return
                if not data:
                    return
                try:
                    dst.sendall(data)
                except OSError:
                    return


@dataclass(frozen=True)
class OpenPort:
    """What one forward is, for the CLI's JSON and the app's Instances notes."""

    launch_id: str
    port: int
    name: str | None
    node_rank: int
    instance_id: str
    local_port: int

    @property
    def local_address(self) -> str:
        return f"{LOCAL_HOST}:{self.local_port}"


class Forwards:
    """The forwards of one process, by launch; see the module docstring for the rules."""

    def __init__(self, data_dir: Path, reconnect_deadline_s: float = RECONNECT_DEADLINE_S,
                 connector: Callable[[Target], Connection] = connect) -> None:
        self.data_dir, self.deadline_s, self._connector = data_dir, reconnect_deadline_s, connector
        self._lock = threading.Lock()
        self._forwards: dict[tuple[str, str, int], Forward] = {}  # (launch, instance, port)
        self._links: dict[str, _Link] = {}  # instance id → its SSH connection

    def open(self, launch_id: str, instances: list[Instance], port: Port) -> list[OpenPort]:
        """Forward ``port`` of the launch's machines (the head, or every node for ``node: all``); a port
        already forwarded is returned as it is.  Connects once to check the machine answers (raises
        NotReadyError/KeyRefusedError/HostKeyError as :func:`connect` does)."""
        nodes = nodes_for(port, [i for i in instances if i.launch_id == launch_id])
        if not nodes:
            raise NotFoundError(f"launch {launch_id} has no machine whose port {port.port} could be forwarded")
        out = []
        for inst in nodes:
            key = (launch_id, inst.instance_id, port.port)
            with self._lock:
                fwd = self._forwards.get(key)
                link = self._links.get(inst.instance_id)
                if link is None or link.closed:
                    link = self._links[inst.instance_id] = _Link(Target.for_instance(inst, self.data_dir),
                                                                 self.deadline_s, self._connector)
            if fwd is None or not fwd.alive:
                link.connection()  # fail here, not on the first browser request
                with self._lock:
                    fwd = self._forwards.get(key)
                    if fwd is None or not fwd.alive:
                        fwd = self._forwards[key] = Forward(launch_id, inst, port, link)
                        log.info("forwarding port %d of %s (node %d) to %s:%d", port.port, launch_id,
                                 fwd.node_rank, LOCAL_HOST, fwd.local_port)
            out.append(_describe(fwd))
        return out

    def connection(self, instance_id: str) -> Connection:
        """The SSH connection the forwards of a machine share (opened again when it dropped)."""
        with self._lock:
            link = self._links.get(instance_id)
        if link is None:
            raise NotFoundError(f"no port of {instance_id} is forwarded")
        return link.connection()

    def list(self, launch_id: str | None = None) -> list[OpenPort]:
        """The open forwards (of one launch), by port and node."""
        with self._lock:
            items = [f for (lid, _, _), f in self._forwards.items() if f.alive and launch_id in (None, lid)]
        return sorted((_describe(f) for f in items), key=lambda o: (o.launch_id, o.port, o.node_rank))

    def stop(self, launch_id: str) -> int:
        """Stop every forward of ``launch_id``; how many were open."""
        with self._lock:
            keys = [k for k in self._forwards if k[0] == launch_id]
            gone = [self._forwards.pop(k) for k in keys]
            used = {k[1] for k in self._forwards}
            links = [self._links.pop(i) for i in list(self._links) if i not in used]
        for fwd in gone:
            fwd.stop()
        for link in links:
            link.close()
        if gone:
            log.info("stopped %d forward(s) of %s", len(gone), launch_id)
        return len(gone)

    def close(self) -> None:
        """Stop everything (the app quits, the CLI's command ends)."""
        with self._lock:
            launches = {k[0] for k in self._forwards}
        for lid in launches:
            self.stop(lid)
        with self._lock:
            links, self._links = list(self._links.values()), {}
        for link in links:
            link.close()

    def ended(self, _data_dir: Path, report: Any) -> None:
        """Teardown listener: the launches whose machines ended lose their forwards."""
        left = {getattr(x, "launch_id", None) for x in report.remaining}
        for lid in {i.launch_id for i in report.terminated} - left:
            self.stop(lid)

    def stop_with_teardown(self) -> None:
        """Register :meth:`ended` with every teardown of this process (idempotent)."""
        from workbench.core.lifecycle.teardown import on_machines_ended

        on_machines_ended(self.ended)


def _describe(fwd: Forward) -> OpenPort:
    return OpenPort(fwd.launch_id, fwd.remote_port, fwd.port.name, fwd.node_rank, fwd.instance.instance_id,
                    fwd.local_port)
