"""The two test clouds of the event-loop stall row, in a process of their own.

    python -m benchmarks.clouds LATENCY_S

Starts moto in server mode behind our fault wrapper (tests/support/aws_moto.py) with one rule that
delays every AWS call by LATENCY_S, and our ARM-protocol server (tests/support/azure_arm/) with the same
delay before every request it answers (Entra ID token, ARM, Retail Prices), plus a fresh Azure
account on it.  Prints one JSON line (endpoints, the Azure account; the account's secret is a
throwaway of this test server) and serves until its stdin closes.

Why a process of its own: both servers are Python; inside the app's process their XML and JSON
work would take the app's interpreter lock and show up as stalls the product does not have.

:class:`CloudServers` starts it from the benchmark process and stops it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class CloudServers:
    """``python -m benchmarks.clouds`` as a child process; ``info`` is what it printed."""

    def __init__(self, latency_s: float) -> None:
        from benchmarks.harness import BenchmarkFailed

        import tempfile

        self._err = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: a chatty server never blocks on it
        self.proc = subprocess.Popen([sys.executable, "-m", "benchmarks.clouds", str(latency_s)], cwd=ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, text=True)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line.strip():
            self.proc.wait(30)
            self._err.seek(0)
            err = self._err.read()
            self.stop()
            raise BenchmarkFailed(f"the test clouds did not start: {err.strip()[-600:]}")
        self.info: dict = json.loads(line)

    def stop(self) -> None:
        if self.proc.poll() is None:
            if self.proc.stdin:
                self.proc.stdin.close()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                self.proc.wait(30)
        self._err.close()


def _serve(latency_s: float) -> None:
    sys.path[:0] = [str(ROOT / "tests" / "support")]
    import tempfile

    import aws_moto
    from azure_arm.server import ArmServer

    class SlowArmServer(ArmServer):
        """Every request waits ``latency_s`` first, on its own server thread (as a far region would)."""

        def _handle(self, *args, **kwargs):
            time.sleep(latency_s)
            return super()._handle(*args, **kwargs)

    stack = aws_moto.start()
    stack.reset()
    stack.faults.add(aws_moto.FaultRule(error=None, latency_s=latency_s))
    with tempfile.TemporaryDirectory(prefix="wb-bench-arm-") as folder:
        arm = SlowArmServer(Path(folder)).start()
        acct = arm.new_account()
        print(json.dumps({"aws_url": stack.url, "arm_url": arm.url, "ca_file": arm.ca_file,
                          "prices_url": arm.prices_url, "tenant": acct.tenant, "client_id": acct.client_id,
                          "subscription": acct.subscription, "secret": acct.secret}), flush=True)
        sys.stdin.read()  # until the benchmark closes our stdin
        arm.stop()
    stack.stop()


if __name__ == "__main__":
    _serve(float(sys.argv[1]))
