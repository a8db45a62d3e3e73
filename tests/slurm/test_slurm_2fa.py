"""A Slurm login node that asks for a one-time code after the key (2FA/TOTP, as many university login nodes do;
issue 35): a real sshd with ``AuthenticationMethods publickey,keyboard-interactive`` and PAM's pam_oath checking a
TOTP (RFC 6238) whose codes the test computes from the shared secret.

The code is asked once: the connection that took it is kept and every later connection of that process (the
provider's, the SSH runner's) goes over it.  pam_oath refuses a code used before, so a second login with the same code
would fail: one login for a whole `workbench run` is what the login node's log shows.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import os
import re
import secrets
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sshd as sshd_module
from sshd import Sshd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from wbcli import Workbench  # noqa: E402

pytestmark = pytest.mark.timeout(120)

PAM_OATH = Path("/lib/x86_64-linux-gnu/security/pam_oath.so")


def totp(secret: bytes, at: float | None = None, step: int = 30, digits: int = 6) -> str:
    """RFC 6238 (HMAC-SHA1, RFC 4226's dynamic truncation)."""
    counter = int((time.time() if at is None else at) // step)
    mac = hmac.new(secret, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    value = struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF
    return str(value % 10 ** digits).zfill(digits)


def fresh_code(secret: bytes) -> str:
    """A code valid for at least 5 more seconds (wait into the next step when this one is about to end)."""
    left = 30 - time.time() % 30
    if left < 5:
        time.sleep(left + 0.1)
    return totp(secret)


def wrong_code(secret: bytes) -> str:
    """A code that is valid nowhere near now (pam_oath's window)."""
    near = {totp(secret, time.time() + 30 * k) for k in range(-6, 7)}
    return next(c for c in (f"{n:06d}" for n in range(123456, 999999, 7919)) if c not in near)


@pytest.fixture
def totp_login(slurm_cluster, tmp_path, monkeypatch):
    """A login node in front of the cluster that lets in the CLI home's app key and then asks for a TOTP code."""
    if not PAM_OATH.exists():
        pytest.fail("the 2FA tests need pam_oath (libpam-oath; make test installs it)")
    wb = Workbench(tmp_path / "home")
    (wb.home / "data").mkdir(parents=True)
    from workbench.core.providers.sshkeys import ensure_keypair

    # sshd names its PAM service after its program name: a link of its own, with a PAM file of the same name
    service = f"sshd-wb-totp-{os.getpid()}-{secrets.token_hex(3)}"
    link = tmp_path / service
    link.symlink_to(sshd_module.SSHD)
    pam_file = Path("/etc/pam.d") / service
    secret = secrets.token_bytes(20)
    users = tmp_path / "users.oath"
    users.write_text(f"HOTP/T30/6\t{getpass.getuser()}\t-\t{secret.hex()}\n")
    users.chmod(0o600)
    pam_file.write_text(f"auth required {PAM_OATH} usersfile={users} window=2 digits=6\n"
                        "account required pam_permit.so\nsession required pam_permit.so\n"
                        "password required pam_deny.so\n")
    monkeypatch.setattr(sshd_module, "SSHD", link)
    login = None
    try:
        login = slurm_cluster.login_node(tmp_path / "login", ensure_keypair(wb.home / "data").public_openssh)
        config = login.config.read_text()
        for old, new in (("KbdInteractiveAuthentication no", "KbdInteractiveAuthentication yes"),
                         ("UsePAM no", "UsePAM yes\nAuthenticationMethods publickey,keyboard-interactive"),
                         ("LogLevel ERROR", "LogLevel VERBOSE"),
                         # sshd hands PAM a bad answer instead of root's unless root may log in with "passwords"
                         # (the tests run as root here; the key is still asked first)
                         ("PermitRootLogin prohibit-password", "PermitRootLogin yes")):
            assert old in config
            config = config.replace(old, new)
        login.config.write_text(config)
        login.restart()
        r = wb("profiles", "add", "slurm", "hpc", "--set", "host=127.0.0.1", "--set", f"port={login.port}",
               "--set", f"user={login.user}")
        assert r.rc == 0, r.err
        wb.login, wb.secret = login, secret
        yield wb
        subprocess.run(wb.argv("down", "--all", "--yes", "--include-own", "--timeout", "30"), env=wb.env,
                       capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    finally:
        if login is not None:
            login.stop()
        pam_file.unlink(missing_ok=True)


def _log(login: Sshd) -> str:
    return (login.root / "sshd.log").read_text()


def test_without_a_code_mfa_required_and_a_wrong_code_is_refused(totp_login):
    wb = totp_login
    r = wb("credentials", "check", "slurm", "hpc", "--json")
    assert r.rc == 3 and r.json["error"]["kind"] == "mfa_required", r.out + r.err
    assert "one-time code" in r.json["error"]["message"]
    # the key was accepted, the code was never asked: the login node says "partial" for the key
    assert re.search(r"Partial publickey for \S+ from", _log(wb.login)), _log(wb.login)[-2000:]

    r = wb("credentials", "check", "slurm", "hpc", "--json", "--mfa-code", wrong_code(wb.secret))
    assert r.rc == 3 and r.json["error"]["kind"] == "mfa_required", r.out + r.err
    assert "refused the one-time code" in r.json["error"]["message"]
    assert "Failed keyboard-interactive/pam" in _log(wb.login)

    r = wb("credentials", "check", "slurm", "hpc", "--json", "--mfa-code", fresh_code(wb.secret))
    assert r.rc == 0 and r.json["principal"] == wb.login.user, r.out + r.err


def test_the_cli_with_a_code_runs_a_job_over_the_one_login_that_took_it(totp_login):
    wb = totp_login
    spec = wb.home.parent / "twofa.yaml"
    spec.write_text("name: twofa\nresources:\n  gpu: V100:1\nguards:\n  max_runtime: 5m\n"
                    "run: echo \"hello from $SLURMD_NODENAME\"\n")
    before = len(_log(wb.login))
    r = wb("run", str(spec), "--profile", "hpc", "--yes", "--interval", "0.3", "--mfa-code", fresh_code(wb.secret),
           timeout=100)
    assert "exit code: 0" in r.err and re.search(r"hello from \w+", r.out), r.out + r.err
    during = _log(wb.login)[before:]
    # one login for the whole run (offers, checks, upload, sbatch, the log, the end): the provider's and the
    # runner's connections all went over the transport that took the code
    assert len(re.findall(r"Accepted keyboard-interactive/pam for", during)) == 1, during
    assert len(re.findall(r"Connection from 127\.0\.0\.1", during)) == 1, during


def test_the_app_asks_for_the_code_once_in_its_mfa_dialog_and_keeps_the_login(totp_login, qtbot, monkeypatch):
    """The desktop app: the Slurm profile's refresh fails with mfa_required, the same masked MFA dialog as for AWS
    opens, the code typed there reaches the provider (SupportsMfa), and later refreshes reuse the login."""
    from workbench.core.providers.accounts import Accounts
    from workbench.core.store.database import Store
    from workbench.ui.shell.main_window import MainWindow
    from PySide6.QtWidgets import QLineEdit

    wb = totp_login
    monkeypatch.setenv("WORKBENCH_HOME", str(wb.home))
    store = Store.open()
    accounts = Accounts(store)
    win = MainWindow(accounts, refresh_ms=60_000)
    qtbot.addWidget(win)
    win._quitting = True
    try:
        win.show()
        qtbot.waitUntil(lambda: "hpc" in win.mfa.open, timeout=20_000)
        box = win.mfa.open["hpc"]
        assert box.textEchoMode() == QLineEdit.EchoMode.Password and box.isVisible()
        box.setTextValue(fresh_code(wb.secret))
        box.accept()
        qtbot.waitUntil(lambda: win.session.snapshot.taken_at > 0 and not win.session.snapshot.errors
                        and not win.session.refreshing, timeout=20_000)
        for _ in range(2):
            win.session.refresh()
            qtbot.waitUntil(lambda: not win.session.refreshing, timeout=20_000)
            assert not win.session.snapshot.errors and "hpc" not in win.mfa.open
        log = _log(wb.login)
        assert len(re.findall(r"Accepted keyboard-interactive/pam for", log)) == 1, log[-3000:]
    finally:
        win.close()
        store.close()


def test_in_the_app_a_reconnect_that_needs_a_new_code_waits_for_the_one_typed(totp_login):
    """The kept connection dropped (network, sleep): the runner's reconnect needs a new code.  In the app (codes come
    later, from the MFA dialog) it waits without knocking again, and goes on once the code reaches the provider."""
    import threading

    from workbench.core.domain.models import Instance, InstanceState, Profile
    from workbench.core.providers.contract import ProviderContext
    from workbench.core.remote import logins
    from workbench.core.remote.connection import Target, connect_with_backoff
    from workbench_slurm.provider import SlurmProvider

    wb = totp_login
    login = wb.login
    prov = SlurmProvider(Profile("hpc", "slurm", settings={"host": "127.0.0.1", "port": str(login.port),
                                                            "user": login.user}),
                         {}, ProviderContext("install-2fa", wb.home / "data"))
    prov.provide_mfa_code(fresh_code(wb.secret))
    assert prov.check_credentials().principal == login.user
    inst = Instance(provider="slurm", profile="hpc", instance_id="wb-x", launch_id="x", region="127.0.0.1",
                    instance_type="gpu", state=InstanceState.RUNNING, host="127.0.0.1",
                    extra=prov._extra(slurm_state="RUNNING"))
    target = Target.for_instance(inst, wb.home / "data")
    assert target.login is prov.ssh
    kept = logins.pooled(target.pool_key)
    assert kept is not None
    assert login.kill_sessions() >= 1  # the kept connection is gone
    deadline = time.monotonic() + 10
    while kept.is_active() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not kept.is_active()
    waits: list[str] = []
    got: list = []
    was = logins.codes_come_later()
    logins.set_codes_come_later(True)
    try:
        t = threading.Thread(target=lambda: got.append(connect_with_backoff(
            target, 60, lambda: False, lambda exc, _d: waits.append(exc.kind))))
        t.start()
        deadline = time.monotonic() + 20
        while not waits and time.monotonic() < deadline:
            time.sleep(0.05)
        assert waits == ["mfa_required"] and t.is_alive()
        # what the dialog does; pam_oath takes each time step's code once: the next step's (within its window)
        prov.provide_mfa_code(totp(wb.secret, time.time() + 30))
        t.join(20)
        assert got and got[0] is not None and got[0].run("echo ok").out.strip() == "ok"
        assert prov.check_credentials().principal == login.user  # the provider shares the new login
        assert len(re.findall(r"Accepted keyboard-interactive/pam for", _log(login))) == 2
    finally:
        logins.set_codes_come_later(was)
        prov.login.close()
