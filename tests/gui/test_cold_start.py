"""Cold start: the first paint of the real main window loads nothing the first window does not need.

A fresh interpreter (like a user's double-click) builds the window the way ``workbench gui`` does
(QApplication, the store, Accounts, MainWindow, show) and records ``sys.modules`` at the window's
first Paint event: no cloud SDK, no plugin, no plot library, no keyring, no job-spec parser and no
view other than Instances may be loaded by then.  What is deferred must still happen: right after
the first paint the other views' modules are preloaded (off the UI thread).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys, time
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication
from workbench.app import make_application
from workbench.core.providers.accounts import Accounts
from workbench.core.store.database import Store
from workbench.ui.shell.main_window import MainWindow

app = make_application()
win = MainWindow(Accounts(Store.open()), refresh_ms=60_000)
at_paint = []

class Spy(QObject):
    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Paint and not at_paint:
            at_paint.append(sorted(sys.modules))
        return False

spy = Spy()
win.installEventFilter(spy)
win.show()
end = time.monotonic() + 60
while not at_paint and time.monotonic() < end:
    app.processEvents()
# the deferred work: the other views' modules are preloaded right after the first paint
while "workbench.ui.monitor.monitor_view" not in sys.modules and time.monotonic() < end:
    app.processEvents()
    time.sleep(0.01)
print(json.dumps({"painted": bool(at_paint), "modules": at_paint[0] if at_paint else [],
                  "preloaded": "workbench.ui.monitor.monitor_view" in sys.modules}))
sys.stdout.flush()
win.session.shutdown()
import os
os._exit(0)
"""

# module prefixes the first window must not load
NOT_BEFORE_PAINT = ("boto3", "botocore", "azure", "alibabacloud", "Tea", "workbench_aws", "workbench_azure",
                    "workbench_alibaba", "pyqtgraph", "numpy", "keyring", "secretstorage", "paramiko", "yaml",
                    "workbench.ui.launch", "workbench.ui.monitor", "workbench.ui.money",
                    "workbench.ui.accounts.accounts_view", "workbench.ui.prices", "workbench.core.lifecycle.recovery", "workbench.core.lifecycle.guards",
                    "importlib.metadata")


def test_first_paint_loads_no_sdk_plugin_plot_library_or_other_view(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", WORKBENCH_HOME=str(tmp_path / "home"))
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["painted"], "the main window never painted"
    loaded = [m for m in got["modules"] if any(m == p or m.startswith(p + ".") for p in NOT_BEFORE_PAINT)]
    assert loaded == [], f"loaded before the first paint: {loaded}"
    assert "workbench.ui.instances.instances_view" in got["modules"]  # the first window itself is there
    # what was deferred still happens, right after the first paint
    assert got["preloaded"], "the views' modules were not preloaded after the first paint"
