"""Copy SSH command / Open terminal building blocks, and the tray icon's tooltip and menu."""

from __future__ import annotations

import shlex

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from workbench.core.domain.models import Instance, InstanceState
from workbench.ui.instances import remote_access
from workbench.ui.runtime.session import Snapshot
from workbench.ui.shell.tray import Tray


def _inst(**kw) -> Instance:
    base = dict(provider="aws", profile="lab", instance_id="i-0abc", launch_id="bert-1a2b3c", region="us-east-1",
                instance_type="p3.2xlarge", state=InstanceState.RUNNING, name="bert", gpu_model="V100",
                gpu_count=1, price_per_hour=3.06)
    base.update(kw)
    return Instance(**base)


def test_ssh_command_uses_address_user_port_and_the_app_key(home):
    inst = _inst(host="203.0.113.7", extra={"ssh_user": "ec2-user", "ssh_port": 2222})
    data = home / "data"
    assert shlex.split(remote_access.ssh_command(inst)) == [
        "ssh", "-i", str(data / "ssh" / "id_ed25519"), "-o", "IdentitiesOnly=yes",
        "-o", f"UserKnownHostsFile={data / 'ssh' / 'known_hosts'}", "-o", "HostKeyAlias=i-0abc.aws.workbench",
        "-o", "StrictHostKeyChecking=accept-new", "-p", "2222", "ec2-user@203.0.113.7"]
    assert remote_access.ssh_command(_inst(host=None)) is None  # still booting: no address yet
    assert remote_access.ssh_command(_inst(provider="local", host="127.0.0.1")) is None


def test_terminal_program_honours_TERMINAL(monkeypatch, tmp_path):
    term = tmp_path / "myterm"
    term.write_text("#!/bin/sh\n")
    term.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("TERMINAL", "myterm")
    argv = remote_access._terminal_argv(["ssh", "u@h"], tmp_path)
    assert argv == [str(term), "-e", "ssh u@h"]


def test_no_terminal_program_is_a_clear_error(monkeypatch, tmp_path):
    import pytest

    from workbench.core.domain.errors import NotFoundError

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("TERMINAL", raising=False)
    with pytest.raises(NotFoundError) as info:
        remote_access._terminal_argv(None, tmp_path)
    assert "TERMINAL" in info.value.hint


def test_tray_tooltip_shows_the_burn_rate_and_menu_offers_stop_all(qtbot):
    w = QWidget()
    qtbot.addWidget(w)
    stop, quit_ = QAction("Stop all billing", w), QAction("Quit", w)
    tray = Tray(w, stop, quit_)
    tray.update_snapshot(Snapshot(instances=(_inst(), _inst(instance_id="i-2", price_per_hour=9.18)), taken_at=1.0))
    assert "2 billing" in tray.toolTip() and "$12.24/h" in tray.toolTip()
    free = _inst(provider="local", profile="local", instance_id="4242-1", price_per_hour=0.0)
    tray.update_snapshot(Snapshot(instances=(free,), taken_at=1.0))  # a free job here: running, not billing
    assert "Nothing billing" in tray.toolTip() and "1 running here" in tray.toolTip()
    assert stop in tray.menu.actions() and quit_ in tray.menu.actions()
