"""The interruption notice as each cloud's metadata service gives it, served over real HTTP by a small stand-in
(no cloud here): AWS IMDSv2 ``spot/instance-action`` (token first), Azure Scheduled Events ``Preempt``
(``Metadata: true`` required), Alibaba ``spot/termination-time``.  The agent must stop the job with SIGTERM,
record the notice and its deadline, and leave once the machine should be gone."""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agent_run import AGENT, wait_until

JOB = ("import signal, sys, time\n"
       "signal.signal(signal.SIGTERM, lambda *a: (print('job: got SIGTERM', flush=True), sys.exit(143)))\n"
       "print('job: started', flush=True)\n"
       "while True: time.sleep(0.1)\n")


class Imds:
    """A metadata service stand-in: answers 404 until ``announce()``, then the cloud's notice."""

    def __init__(self) -> None:
        self.notice: tuple[str, str] | None = None  # (path, body)
        self.seen: list[tuple[str, str, dict]] = []
        imds = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                imds.seen.append((self.command, self.path, dict(self.headers)))
                if self.command == "PUT" and self.path == "/latest/api/token":
                    return self._send(200, "tok-123")
                if self.path.startswith("/metadata/") and self.headers.get("Metadata") != "true":
                    return self._send(400, "Metadata header required")
                if self.path.startswith("/latest/meta-data/") and self.path.endswith("instance-action") \
                        and self.headers.get("X-aws-ec2-metadata-token") != "tok-123":
                    return self._send(401, "")
                if self.path.startswith("/metadata/scheduledevents"):
                    events = [] if imds.notice is None else [json.loads(imds.notice[1])]
                    return self._send(200, json.dumps({"DocumentIncarnation": len(events), "Events": events}))
                if imds.notice is not None and self.path == imds.notice[0]:
                    return self._send(200, imds.notice[1])
                return self._send(404, "")

            def _send(self, status: int, body: str) -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = _answer

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def imds():
    server = Imds()
    yield server
    server.stop()


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


CASES = {
    "aws": ("/latest/meta-data/spot/instance-action",
            lambda t: json.dumps({"action": "terminate", "time": _iso(t)}), "AWS spot instance-action (terminate)"),
    "azure": ("/metadata/scheduledevents",
              lambda t: json.dumps({"EventId": "A1B2", "EventType": "Preempt", "ResourceType": "VirtualMachine",
                                    "Resources": ["vm"], "EventStatus": "Scheduled",
                                    "NotBefore": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(t))}),
              "Azure Scheduled Events Preempt (A1B2)"),
    "alibaba": ("/latest/meta-data/instance/spot/termination-time", lambda t: _iso(t),
                "Alibaba spot termination-time"),
}


@pytest.mark.parametrize("cloud", sorted(CASES))
def test_each_cloud_s_notice_stops_the_job_and_is_recorded(cloud, imds, tmp_path):
    import subprocess

    path, body, source = CASES[cloud]
    (tmp_path / "job.py").write_text(JOB)
    config = {"launch_id": "n-1", "state_dir": str(tmp_path), "work_dir": str(tmp_path), "mounts": [],
              "notice": {"cloud": cloud, "imds": imds.url, "poll_s": 0.1}, "reclaim_wait_s": 0.2,
              "term_grace_s": 5}
    (tmp_path / "storage.json").write_text(json.dumps(config))
    log = open(tmp_path / "out.log", "wb")
    proc = subprocess.Popen([sys.executable, str(AGENT), "run", "--config", str(tmp_path / "storage.json"), "--",
                             sys.executable, "job.py"], cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    try:
        wait_until(lambda: "job: started" in (tmp_path / "out.log").read_text(), 20, "the job")
        wait_until(lambda: len(imds.seen) >= 2, 10, "the agent asking the metadata service")
        assert not (tmp_path / "interrupted").exists()  # 404 / no events: no notice
        deadline = int(time.time()) + 2
        imds.notice = (path, body(deadline))
        assert proc.wait(30) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = (tmp_path / "out.log").read_text()
    assert f"interruption notice: {source}" in out and "job: got SIGTERM" in out
    record = json.loads((tmp_path / "interrupted").read_text())
    assert record["source"] == source and record["not_after"] == deadline and record["reason"] == "preemption"
    assert record["saved"] is True and record["job_exit"] == 143  # no sync mount: nothing to save
    if cloud == "aws":
        assert any(m == "PUT" and p == "/latest/api/token" for m, p, _ in imds.seen)  # IMDSv2
