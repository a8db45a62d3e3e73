"""Instances ▸ Open port… over a real sshd (pytest-qt, offscreen): the menu offers it for a job with ports, the
dialog names the services, Open in browser forwards on a worker (never the UI thread) and opens the Jupyter URL
with its token, which answers; Instances shows the open port; the forward ends with the launch and the app."""

from __future__ import annotations

import threading

import pytest

from .test_ports import _get, _until_ok, served  # noqa: F401 - the fixture: http.server and Jupyter on the machine

pytestmark = pytest.mark.timeout(180)


def test_open_port_menu_forwards_jupyter_off_the_ui_thread_and_ends_with_the_launch(qtbot, served, monkeypatch):
    from PySide6.QtWidgets import QMenu

    from workbench.core.lifecycle.teardown import teardown
    from workbench.core.remote.forwards import Forwards
    from workbench.ui.instances import port_actions
    from workbench.ui.instances.instances_model import INSTANCE_ROLE
    from workbench.ui.instances.instances_view import InstancesView
    from workbench.ui.runtime.session import Session

    remote, inst, spec, http_port, jupyter_port, _ = served
    opened_urls, threads = [], []
    monkeypatch.setattr(port_actions.QDesktopServices, "openUrl", lambda url: opened_urls.append(url.toString()))
    real_open = Forwards.open

    def spy(self, *a, **kw):
        threads.append(threading.current_thread() is threading.main_thread())
        return real_open(self, *a, **kw)

    monkeypatch.setattr(Forwards, "open", spy)
    session = Session(remote.accounts)
    view = InstancesView(session)
    qtbot.addWidget(view)
    try:
        session.refresh()
        qtbot.waitUntil(lambda: view.proxy.rowCount() == 1, timeout=20_000)
        view.table.selectRow(0)
        assert view.ports.open_action.isEnabled()
        view._context_menu(view.table.visualRect(view.proxy.index(0, 0)).center())
        (menu,) = [m for m in view.findChildren(QMenu) if m.isVisible()]
        assert view.ports.open_action in menu.actions() and view.ports.open_action.text() == "Open &port…"
        menu.close()

        view.ports.open_action.trigger()
        dlg = view.ports.dialog
        assert dlg is not None and dlg.isVisible()
        assert [dlg.ports.item(i).text() for i in range(dlg.ports.count())] == [
            f"Port {http_port} (HTTP)", f"Port {jupyter_port} (Jupyter)"]
        dlg.ports.setCurrentRow(1)
        assert dlg.browser.isEnabled()
        dlg.browser.click()
        qtbot.waitUntil(lambda: bool(opened_urls), timeout=60_000)
        assert threads == [False]  # the SSH connection was made on a worker
        (url,) = opened_urls
        assert url.startswith("http://127.0.0.1:") and "?token=" in url and "is forwarded to 127.0.0.1:" in \
            dlg.message.text()
        assert _until_ok(url)[0] == 200  # the URL the app opened is the one that answers
        token = url.split("?token=")[1]
        local = int(url.split(":")[2].split("/")[0])
        assert _get(f"http://127.0.0.1:{local}/api/status?token={token}")[0] == 200
        assert token not in dlg.message.text()  # shown only in the browser the user opened

        qtbot.waitUntil(lambda: inst.launch_id in view.model.open_ports, timeout=10_000)
        tip = view.proxy.index(0, 0).data(0x03)  # ToolTipRole
        assert f"Open ports (127.0.0.1 only): {jupyter_port} → 127.0.0.1:{local}" in tip
        assert view.proxy.index(0, 0).data(INSTANCE_ROLE).launch_id == inst.launch_id
        dlg.reject()

        assert teardown(remote.accounts, [inst.launch_id], timeout=10, poll=0.05).clean
        assert view.ports.forwards.list() == []  # the launch ended: its forward with it
        with pytest.raises(OSError):
            import socket

            socket.create_connection(("127.0.0.1", local), timeout=2).close()
    finally:
        view.ports.close()  # what the app's quit does
        session.shutdown()
