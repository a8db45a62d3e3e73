"""A job's ports forwarded over the machine's SSH (a real sshd): a plain HTTP server and a real Jupyter server
answer through the forward, at the URL the app would open; 127.0.0.1 only; a taken local port leads to
another; the forward outlives an sshd restart and ends with the launch's teardown."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from .helpers import job, launch

from workbench.core import paths
from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.teardown import teardown
from workbench.core.remote.forwards import Forwards
from workbench.core.remote.port_services import find_url, port_of

pytest.importorskip("jupyter_server", reason="make test installs jupyter_server (the test extra)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 10.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _until_ok(url: str, deadline_s: float = 60.0) -> tuple[int, bytes]:
    end, last = time.monotonic() + deadline_s, None
    while time.monotonic() < end:
        try:
            status, body = _get(url)
            if status == 200:
                return status, body
            last = status
        except OSError as exc:
            last = exc
        time.sleep(0.3)
    raise AssertionError(f"{url} did not answer 200 within {deadline_s} s: {last}")


@pytest.fixture
def served(remote, tmp_path):
    """A launch on the sshd machine whose job serves HTTP on one port and Jupyter (with a token) on another."""
    http_port, jupyter_port, token = _free_port(), _free_port(), None
    work = tmp_path / "work"
    work.mkdir()
    (work / "hello.txt").write_text("hello through the tunnel\n")
    run = (f"python3 -u -m http.server {http_port} --bind 127.0.0.1 & "
           f"exec {sys.executable} -m jupyter_server --no-browser --ip=127.0.0.1 --port={jupyter_port} "
           f"--port-retries=0 --allow-root --ServerApp.root_dir=.")
    spec = parse_spec(f"name: ports-test\nrun: {json.dumps(run)}\nworkdir: {work}\non_finish: keep\n"
                      f"resources: {{gpu: 'V100:1'}}\n"
                      f"ports: [{{port: {http_port}, name: http}}, {{port: {jupyter_port}, name: jupyter}}]\n",
                      source=str(tmp_path / "spec.yaml"), base_dir=tmp_path)
    inst = launch(remote.accounts, spec)  # ports are no longer refused at launch
    assert job(remote.accounts, inst, spec).launch()
    try:
        # "the machine" is this computer: let both servers take their ports before a forward could
        log = remote.server.remote_dir / "jobs" / inst.launch_id / "output.log"
        end = time.monotonic() + 60
        while time.monotonic() < end:
            text = log.read_text() if log.exists() else ""
            if ("Serving HTTP" in text and "token=" in text) or "[C " in text:
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"the servers did not start: {text[-2000:]}")
        yield remote, inst, spec, http_port, jupyter_port, token
    finally:
        remote.server.end_jobs(inst.launch_id)


@pytest.mark.timeout(240)
def test_http_and_jupyter_answer_through_the_forward_which_survives_sshd_and_ends_with_the_launch(served):
    remote, inst, spec, http_port, jupyter_port, token = served
    lid = inst.launch_id
    fw = Forwards(remote.data_dir, reconnect_deadline_s=20)
    fw.stop_with_teardown()
    try:
        # the remote servers listen on this computer's loopback too: their ports are taken here, so the
        # forwards must take others (what happens when the user runs Jupyter locally as well)
        (http,) = fw.open(lid, [inst], port_of(spec.ports, http_port))
        assert http.local_port != http_port and http.local_address == f"127.0.0.1:{http.local_port}"
        listening = [c for c in __import__("psutil").net_connections("tcp")
                     if c.status == "LISTEN" and c.laddr.port == http.local_port]
        assert listening and all(c.laddr.ip == "127.0.0.1" for c in listening)  # never 0.0.0.0

        url = find_url(fw, lid, port_of(spec.ports, http_port), http, paths.job_log(lid))
        assert url == f"http://127.0.0.1:{http.local_port}/"
        status, body = _until_ok(url + "hello.txt")
        assert body == b"hello through the tunnel\n"

        jport = port_of(spec.ports, jupyter_port)
        (jup,) = fw.open(lid, [inst], jport)
        jurl = find_url(fw, lid, jport, jup, paths.job_log(lid), wait_s=60, poll_s=0.5)
        assert jurl is not None and jurl.startswith(f"http://127.0.0.1:{jup.local_port}/")
        (runtime,) = (remote.server.home / ".local/share/jupyter/runtime").glob(f"jpserver-*.json")
        token = json.loads(runtime.read_text())["token"]  # the token the server made and printed
        assert jurl.endswith(f"?token={token}")  # read from the job's log, rewritten to the local port
        status, page = _until_ok(jurl)
        assert status == 200
        status, api = _get(f"http://127.0.0.1:{jup.local_port}/api/status?token={token}")
        assert status == 200 and "started" in json.loads(api)
        assert _get(f"http://127.0.0.1:{jup.local_port}/api/contents")[0] == 403  # no token, no answer

        # many requests side by side over the one SSH connection
        results: list[int] = []
        threads = [threading.Thread(target=lambda: results.append(_get(url + "hello.txt")[0])) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert results == [200] * 8

        remote.server.restart()  # the connection drops; the next request opens it again
        assert _until_ok(url + "hello.txt", 30)[1] == b"hello through the tunnel\n"
        assert _until_ok(f"http://127.0.0.1:{jup.local_port}/api/status?token={token}", 30)[0] == 200
        assert {o.port for o in fw.list(lid)} == {http_port, jupyter_port}

        report = teardown(remote.accounts, [lid], timeout=10, poll=0.05)
        assert report.clean
        assert fw.list(lid) == []  # the launch ended: its forwards with it
        for local in (http.local_port, jup.local_port):
            with pytest.raises(OSError):
                socket.create_connection(("127.0.0.1", local), timeout=2).close()
    finally:
        fw.close()


def test_a_port_the_job_does_not_list_is_refused(served):
    from workbench.core.domain.errors import ConfigError

    _, _, spec, http_port, _, _ = served
    with pytest.raises(ConfigError, match=f"its ports: {http_port} \\(HTTP\\)"):
        port_of(spec.ports, 1)


def _wb_env(remote) -> dict:
    import os

    from .conftest import REMOTE_PLUGINS

    return dict(os.environ, WORKBENCH_HOME=str(remote.home), PYTHONPATH=str(REMOTE_PLUGINS), DISPLAY="")


@pytest.mark.timeout(180)
def test_the_cli_lists_the_ports_and_open_forwards_until_ctrl_c(served):
    import signal
    import subprocess

    remote, inst, spec, http_port, jupyter_port, _ = served
    lid = inst.launch_id
    env = _wb_env(remote)
    listed = subprocess.run([sys.executable, "-m", "workbench", "ports", lid, "--json"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)["ports"]
    assert [(r["port"], r["name"], r["service"], r["http"], r["forwards"]) for r in rows] == [
        (http_port, "http", "HTTP", True, []), (jupyter_port, "jupyter", "Jupyter", True, [])]

    missing = subprocess.run([sys.executable, "-m", "workbench", "open", lid, "1", "--json"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1 and json.loads(missing.stdout)["error"]["kind"] == "config"

    proc = subprocess.Popen([sys.executable, "-m", "workbench", "open", lid, str(jupyter_port), "--json"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        text = ""
        while True:  # the document is written and flushed while the forward goes on
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            text += line
            try:
                doc = json.loads(text)
                break
            except ValueError:
                continue
        (fwd,) = doc["forwards"]
        assert doc["port"] == jupyter_port and doc["browser"] is False  # no display here
        assert fwd["local_address"] == f"127.0.0.1:{fwd['local_port']}" and "?token=" in fwd["url"]
        assert _until_ok(fwd["url"])[0] == 200  # the URL the user is given is the one that answers
        token = fwd["url"].split("?token=")[1]
        assert _get(f"http://127.0.0.1:{fwd['local_port']}/api/status?token={token}")[0] == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", fwd["local_port"]), timeout=2).close()
        log_dir = remote.home  # the token is shown to the user who asked, never written to the app's log
        for path in log_dir.rglob("*.log"):
            if "jobs" not in path.parts:
                assert token not in path.read_text(errors="replace"), path
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
