"""core/remote/logins.py: a login node's own way in (jump host text, keys pasted into the keyring, one-time codes)."""

from __future__ import annotations

import socket

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from workbench.core.domain.errors import AuthError, ConfigError
from workbench.core.remote import logins


def _pem(key, fmt, password: bytes | None = None) -> str:
    enc = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    return key.private_bytes(serialization.Encoding.PEM, fmt, enc).decode()


def test_jump_host_text():
    assert logins.parse_jump("", "alice") is None
    assert logins.parse_jump("bastion.example.edu", "alice") == logins.Jump("bastion.example.edu", 22, "alice")
    assert logins.parse_jump("bob@gw:2222", "alice") == logins.Jump("gw", 2222, "bob")
    assert logins.parse_jump("bob@[::1]:2200", "alice") == logins.Jump("::1", 2200, "bob")
    j = logins.parse_jump("bob@gw.example.edu:2222", "alice")
    assert j.spec == "bob@gw.example.edu:2222" and j.alias == "gw.example.edu-2222.jump.workbench"
    for bad in ("bob@gw:0", "bob@gw:99999", "bob@gw:port", "@gw", "bob@g w"):
        with pytest.raises(ConfigError, match="user@host:port"):
            logins.parse_jump(bad, "alice")


def test_keys_as_pasted_are_read_and_a_broken_one_is_named_without_its_text():
    ed = ed25519.Ed25519PrivateKey.generate()
    text = _pem(ed, serialization.PrivateFormat.OpenSSH)
    want = ed.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    for pasted in (text, text.replace("\n", " "), text.replace("\n", "\r\n"), text.replace("\n", "")):
        key = logins.load_private_key(pasted, "the key of hpc")
        assert key.get_name() == "ssh-ed25519" and key.asbytes().endswith(want)
    r = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    assert logins.load_private_key(_pem(r, serialization.PrivateFormat.TraditionalOpenSSL), "k").get_name() == "ssh-rsa"

    locked = _pem(ed, serialization.PrivateFormat.OpenSSH, b"pass phrase")
    with pytest.raises(ConfigError, match="passphrase") as exc:
        logins.load_private_key(locked, "the key of hpc")
    assert "ssh-agent" in (exc.value.hint or "")
    broken = text[:200] + text[260:]
    with pytest.raises(ConfigError, match="not a private key") as exc:
        logins.load_private_key(broken, "the key of hpc")
    assert text[40:80] not in str(exc.value) + str(exc.value.hint)


def test_a_code_is_used_once_and_the_prompter_asks_only_when_none_was_given():
    login = logins.Login("slurm/t")
    with pytest.raises(AuthError):
        login.give_code("12 34")
    login.give_code(" 123456 ")
    asked = []
    logins.set_prompter(lambda where: asked.append(where) or "654321")
    try:
        assert login.take_code("the login node") == "123456" and asked == []
        assert login.take_code("the login node") == "654321" and asked == ["the login node"]
        logins.set_prompter(None)
        assert login.take_code("the login node") is None
    finally:
        logins.set_prompter(None)


def test_the_pool_forgets_transports_that_are_gone_and_forget_closes_a_profiles():
    import paramiko

    login = logins.register("slurm", "pool-test", logins.Login("slurm/pool-test"))
    assert logins.lookup("slurm", "pool-test") is login
    a, b = socket.socketpair()
    try:
        dead = paramiko.Transport(a)  # never started: not active
        logins.keep((login, "u", "h", 22), dead)
        assert logins.pooled((login, "u", "h", 22)) is None
        logins.forget("slurm", "pool-test")
        assert logins.lookup("slurm", "pool-test") is None
    finally:
        a.close()
        b.close()


class _Transport:
    """What the pool asks of a paramiko Transport."""

    def __init__(self) -> None:
        self.active, self.closed = True, 0

    def is_active(self) -> bool:
        return self.active

    def close(self) -> None:
        self.closed += 1
        self.active = False


def test_a_login_nodes_transport_is_shared_up_to_the_limit_and_closed_with_its_last_user():
    key = (logins.Login("slurm/share"), "u", "h", 22)
    first = _Transport()
    assert logins.keep(key, first, precious=False)  # its opener is its first user
    assert not logins.keep(key, _Transport(), precious=False)  # a second live one stays its opener's own
    shared = [logins.acquire(key) for _ in range(logins.SHARE_LIMIT - 1)]
    assert shared == [first] * (logins.SHARE_LIMIT - 1)
    assert logins.acquire(key) is None  # full: the next connection opens its own (OpenSSH's MaxSessions)
    for _ in range(logins.SHARE_LIMIT - 1):
        logins.release(key, first)
    assert first.closed == 0 and logins.pooled(key) is first  # the opener still uses it
    logins.release(key, first)
    assert first.closed == 1 and logins.pooled(key) is None  # the last user closed it
    logins.release(key, first)  # released again (a forgotten transport): closing twice is harmless
    assert logins.acquire(key) is None


def test_a_transport_that_took_a_code_is_shared_by_all_and_kept_for_the_process():
    key = (logins.Login("slurm/code"), "u", "h", 22)
    coded = _Transport()
    assert logins.keep(key, coded, precious=True)
    assert all(logins.acquire(key) is coded for _ in range(logins.SHARE_LIMIT * 2))
    for _ in range(logins.SHARE_LIMIT * 2 + 1):
        logins.release(key, coded)
    assert coded.closed == 0 and logins.pooled(key) is coded  # no second code is asked for while it lives
    coded.active = False
    assert logins.pooled(key) is None and logins.acquire(key) is None  # dropped: forgotten
