"""core/remote/connection.py: the SSH socket's tuning (TCP_NODELAY, immediate ACKs) on a real loopback socket."""

from __future__ import annotations

import socket

from workbench.core.remote.connection import tune_socket


def test_the_ssh_socket_sends_at_once_and_still_reads_and_writes_as_a_socket():
    server = socket.create_server(("127.0.0.1", 0))
    try:
        raw = socket.create_connection(server.getsockname())
        peer, _ = server.accept()
        sock = tune_socket(raw)
        assert raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        assert hasattr(socket, "TCP_QUICKACK") is (sock is not raw)  # wrapped where the system has it (Linux)
        sock.settimeout(5)
        peer.sendall(b"SSH-2.0-test\r\n")
        assert sock.recv(64) == b"SSH-2.0-test\r\n"
        sock.sendall(b"hello")
        assert peer.recv(5) == b"hello"
        assert sock.fileno() == raw.fileno()  # everything else is the socket's own
        sock.close()
        assert peer.recv(1) == b""  # closed through the wrapper
        peer.close()
    finally:
        server.close()
