"""A TCP relay on 127.0.0.1 that delays every byte by a fixed time each way: a server that is "far away" (a
container registry 50 ms round trip from the machine, as a cloud region's registry or Docker Hub is), for the
benchmarks that run everything on this computer.

    with SlowLink(("127.0.0.1", registry_port), rtt_s=0.05) as link:
        link.port    # connect here instead

Each direction is a reader that stamps the chunks it gets and a writer that sends each one when its time has
come, in order: the delay is added once per direction, not once per chunk, as on a long link.
"""

from __future__ import annotations

import queue
import socket
import threading
import time


class SlowLink:
    def __init__(self, target: tuple[str, int], rtt_s: float) -> None:
        self.target, self.delay_s = target, rtt_s / 2
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._open: list[socket.socket] = []
        self._stop = threading.Event()
        threading.Thread(target=self._accept, name="slow-link", daemon=True).start()

    def __enter__(self) -> "SlowLink":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        self._server.close()
        for s in list(self._open):
            try:
                s.close()
            except OSError:
                pass

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._open.append(s)
            for src, dst in ((client, upstream), (upstream, client)):
                self._pipe(src, dst)

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        chunks: queue.Queue[tuple[float, bytes]] = queue.Queue()

        def read() -> None:
            while True:
                try:
                    data = src.recv(1 << 16)
                except OSError:
                    data = b""
                chunks.put((time.monotonic() + self.delay_s, data))
                if not data:
                    return

        def write() -> None:
            while True:
                due, data = chunks.get()
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                if not data:
                    try:
                        dst.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    return
                try:
                    dst.sendall(data)
                except OSError:
                    return

        threading.Thread(target=read, daemon=True).start()
        threading.Thread(target=write, daemon=True).start()
