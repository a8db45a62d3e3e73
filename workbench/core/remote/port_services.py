"""What a forwarded port is and the address to open: Jupyter with its token, TensorBoard, a VS Code server.

Jupyter prints its address with a token (``http://127.0.0.1:8888/lab?token=…``, ``…/tree?token=…``)
into the job's output: :func:`jupyter_url` finds the one of the spec's port in the job's log (the local
copy, else the machine's own log over SSH) and rewrites it to the local port of the forward.
TensorBoard (``tensorboard``), code-server and openvscode-server (``vscode``) and ``http`` are plain HTTP
at ``/``.  The token is a secret-ish value: it is never logged (only shown to the user who asked).

Threading: plain functions; :func:`remote_log_text` runs a command over SSH (never on a UI thread).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from workbench.core.domain.models import Port
from workbench.core.remote.forwards import LOCAL_HOST

#: services opened in a browser, and what each is called
HTTP_SERVICES = {"jupyter": "Jupyter", "tensorboard": "TensorBoard", "vscode": "VS Code server", "http": "HTTP"}

_JUPYTER = re.compile(r"https?://(?:127\.0\.0\.1|localhost|0\.0\.0\.0|\[::1?\]|[A-Za-z0-9.-]+):(\d+)"
                      r"(/[^\s?\"'<>]*)?\?token=([A-Za-z0-9_-]+)")
#: at most this many bytes of a log are searched (its end: a restarted server prints a new token)
LOG_TAIL_BYTES = 2_000_000


def is_http(port: Port) -> bool:
    """Whether the app opens this port in a browser (a known HTTP service)."""
    return port.name in HTTP_SERVICES


def service_label(port: Port) -> str:
    """The port as the user reads it: ``8888 (Jupyter)``, ``8000 (api)``, ``6006``."""
    name = HTTP_SERVICES.get(port.name or "", port.name)
    return f"{port.port} ({name})" if name else str(port.port)


def jupyter_url(log_text: str, remote_port: int, local_port: int) -> str | None:
    """The last token URL Jupyter printed for ``remote_port``, pointing at ``127.0.0.1:local_port``."""
    found = None
    for m in _JUPYTER.finditer(log_text):
        if int(m.group(1)) == remote_port:
            found = m
    if found is not None:
        return f"http://{LOCAL_HOST}:{local_port}{found.group(2) or '/'}?token={found.group(3)}"
    if re.search(rf"https?://[^\s/]+:{remote_port}/\S*\?token=\.\.\.", log_text):
        return f"http://{LOCAL_HOST}:{local_port}/"  # a token the user set is printed hidden: they know it
    return None


def read_log_tail(path: Path, limit: int = LOG_TAIL_BYTES) -> str:
    """The end of a local log, or "" when there is none yet."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def remote_log_text(conn: Any, launch_id: str, limit: int = LOG_TAIL_BYTES) -> str:
    """The end of the job's log on the machine (``conn`` an open Connection), or "" when unreadable."""
    from workbench.core.remote.supervisor import BASE_EXPR

    path = f'{BASE_EXPR}/jobs/{shlex.quote(launch_id)}/output.log'
    try:
        res = conn.run(f"tail -c {int(limit)} {path} 2>/dev/null", timeout=30)
    except Exception:  # noqa: BLE001 - a URL without a token is still an answer
        return ""
    return res.out if res.rc == 0 else ""


def url_for(port: Port, local_port: int, log_text: str = "") -> str | None:
    """The address to open for ``port`` forwarded to ``local_port``: Jupyter's with its token (None while
    the log has none yet), a plain ``http://127.0.0.1:PORT/`` for the other HTTP services, None for the
    rest (not known to speak HTTP)."""
    if port.name == "jupyter":
        return jupyter_url(log_text, port.port, local_port)
    if is_http(port):
        return f"http://{LOCAL_HOST}:{local_port}/"
    return None


def port_of(ports: tuple[Port, ...], number: int) -> Port:
    """The spec's port ``number``; ConfigError naming the ones it has."""
    from workbench.core.domain.errors import ConfigError

    for p in ports:
        if p.port == number:
            return p
    have = ", ".join(service_label(p) for p in ports) or "none"
    raise ConfigError(f"the job does not list port {number} (its ports: {have})",
                      hint="add it to the spec's ports: (only the ports it lists are forwarded)")


def find_url(forwards: Any, launch_id: str, port: Port, opened: Any, log_path: Path | None,
             wait_s: float = 0.0, poll_s: float = 1.0) -> str | None:
    """The URL of one open forward (``opened`` an OpenPort): for Jupyter, the token URL from the local log
    copy (the head's) or the machine's own log, waiting up to ``wait_s`` for the server to print it."""
    import time

    if port.name != "jupyter":
        return url_for(port, opened.local_port)
    deadline = time.monotonic() + wait_s
    while True:
        text = read_log_tail(log_path) if log_path is not None and opened.node_rank == 0 else ""
        url = jupyter_url(text, port.port, opened.local_port)
        if url is None:
            try:
                text = remote_log_text(forwards.connection(opened.instance_id), launch_id)
            except Exception:  # noqa: BLE001 - no connection now: no token yet
                text = ""
            url = jupyter_url(text, port.port, opened.local_port)
        if url is not None or time.monotonic() >= deadline:
            return url
        time.sleep(poll_s)


def ports_json(ports: tuple[Port, ...], opened: list[Any], urls: dict[tuple[int, int], str | None]) -> list[dict]:
    """The rows of ``workbench ports --json``: each spec port with its forwards here (``urls`` by
    (port, node rank))."""
    rows = []
    for p in ports:
        fwds = [{"node_rank": o.node_rank, "instance_id": o.instance_id, "local_port": o.local_port,
                 "local_address": o.local_address, "url": urls.get((o.port, o.node_rank))}
                for o in opened if o.port == p.port]
        rows.append({"port": p.port, "name": p.name, "node": p.node, "service": HTTP_SERVICES.get(p.name or ""),
                     "http": is_http(p), "forwards": fwds})
    return rows
