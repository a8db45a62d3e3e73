"""An unusable profile (here: its SDK is missing) is listed on every refresh: the log gets its traceback
once and one line per refresh after that, not a traceback each time (~5,900 lines in ten minutes)."""

from __future__ import annotations

import logging
import uuid

from workbench.core.domain.models import Profile
from workbench.ui.shell.main_window import MainWindow


def test_one_line_per_refresh_at_most(qtbot, fake_accounts, monkeypatch, caplog):
    import workbench_fakecloud.provider as fake

    def missing_sdk(*_a, **_k):
        raise ModuleNotFoundError("No module named 'botocore'", name="botocore")

    for method in ("instances", "leftovers", "offers", "regions", "check_credentials", "actual_costs"):
        monkeypatch.setattr(fake.FakeCloudProvider, method, missing_sdk)
    name = f"lab-{uuid.uuid4().hex[:6]}"  # a fresh name: what this process logged before does not count
    fake_accounts.save_profile(Profile(name, "fakecloud", "fake-east"))
    fake_accounts.credentials.set("fakecloud", name, {"account": "a", "token": "t"})
    caplog.set_level(logging.INFO, logger="workbench")
    win = MainWindow(fake_accounts, refresh_ms=60_000)
    qtbot.addWidget(win)
    win._quitting = True
    for key in ("spend", "accounts", "launch", "instances"):  # every view that asks the providers
        win.show_view(key)
    refreshes = 10
    for _ in range(refreshes):
        qtbot.waitUntil(lambda: not win.session.refreshing, timeout=20_000)
        started = win.session.refresh()
        assert started is not None
        qtbot.waitUntil(lambda: not win.session.refreshing, timeout=20_000)  # Spend recomputes after each
    qtbot.waitUntil(lambda: not win.session.refreshing, timeout=20_000)

    def text(r: logging.LogRecord) -> str:
        return r.getMessage() + (logging.Formatter().formatException(r.exc_info) if r.exc_info else "")

    # the billing sync runs beside the refreshes: wait for its word (on a busy machine it came after the last
    # refresh had ended, and the check below read the log too early)
    qtbot.waitUntil(lambda: any(r.name == "workbench.spend" and (name in text(r) or "botocore" in text(r))
                                for r in caplog.records), timeout=20_000)
    about = [r for r in caplog.records if name in text(r) or "botocore" in text(r)]
    tracebacks = [r for r in about if r.exc_info]
    lines = sum(1 + (len(logging.Formatter().formatException(r.exc_info).splitlines()) if r.exc_info else 0)
                for r in about)
    assert len(tracebacks) <= 2, [r.getMessage() for r in tracebacks]  # once per area (listing, billing)
    per_refresh = [r for r in about if not r.exc_info]
    assert len(per_refresh) <= refreshes + 2, [r.getMessage() for r in per_refresh]
    assert lines < 150, f"{lines} log lines for {refreshes} refreshes"
    assert any(r.name == "workbench.spend" for r in about)  # the billing sync was asked, and failed, too
    assert f"cannot check {name}" in win.statusBar().currentMessage()
