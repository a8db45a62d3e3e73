"""Mail notices against a real SMTP server on 127.0.0.1 (tests/support/smtp_server.py): plain, AUTH PLAIN
over STARTTLS and over TLS from the first byte with a certificate made here, and each refusal as the
error it is, with no password in any error or log line."""

from __future__ import annotations

import logging
import ssl
import subprocess

import pytest

from smtp_server import SmtpServer
from workbench.core.domain.errors import AuthError, ConfigError, TransientError
from workbench.core.notify import ChannelConfig, ChannelSecrets, DeliveryError, notice_for, send
from workbench.core.providers.redaction import leaks_fragment

PASSWORD = "pa55word-of-the-mailbox-123"
NOTICE = notice_for("gave_up", "train attempt 3 ended: no offer left", "l-7", "lab", ts=1_700_000_000.0)


def _config(smtp: SmtpServer, **kw) -> ChannelConfig:
    base = dict(channel="smtp", smtp_host="127.0.0.1", smtp_port=smtp.port, smtp_tls="none",
                mail_from="workbench@example.org", mail_to=("me@example.org", "you@example.org"))
    return ChannelConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 (openssl), and a client context that trusts only it."""
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(d / "key.pem"),
                    "-out", str(d / "cert.pem"), "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return str(d / "cert.pem"), str(d / "key.pem"), ssl.create_default_context(cafile=str(d / "cert.pem"))


def test_plain_mail_to_a_local_relay_has_the_title_as_subject():
    with SmtpServer() as smtp:
        send(_config(smtp), ChannelSecrets(), NOTICE)
        (got,) = smtp.wait_for(1)
    assert got.mail_from == "workbench@example.org" and got.rcpts == ["me@example.org", "you@example.org"]
    msg = got.message
    assert msg["Subject"] == "[Workbench] Recovery gave up: l-7"
    assert msg["To"] == "me@example.org, you@example.org" and msg["X-Workbench-Event"] == "gave_up"
    assert msg.get_content().replace("\r\n", "\n") == ("[Workbench] Recovery gave up: l-7\ntrain attempt 3 ended: no offer left\n"
                                 "launch l-7, profile lab\n2023-11-14 22:13:20 UTC\n")
    assert got.user is None and not got.tls


def test_starttls_then_auth_plain(cert):
    certfile, keyfile, trust = cert
    with SmtpServer(users={"bot": PASSWORD}, tls=(certfile, keyfile), require_auth=True) as smtp:
        send(_config(smtp, smtp_tls="starttls", smtp_user="bot"), ChannelSecrets(smtp_password=PASSWORD), NOTICE,
             ssl_context=trust)
        (got,) = smtp.wait_for(1)
    assert got.user == "bot" and got.tls


def test_tls_from_the_first_byte(cert):
    certfile, keyfile, trust = cert
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certfile, keyfile)
    with SmtpServer(users={"bot": PASSWORD}) as smtp:
        # the server speaks TLS from the start: wrap its listening socket
        smtp._server.socket = context.wrap_socket(smtp._server.socket, server_side=True)
        send(_config(smtp, smtp_tls="ssl", smtp_user="bot"), ChannelSecrets(smtp_password=PASSWORD), NOTICE,
             ssl_context=trust)
        (got,) = smtp.wait_for(1)
    assert got.user == "bot"


def test_a_certificate_that_does_not_verify_is_refused(cert):
    certfile, keyfile, _ = cert
    with SmtpServer(tls=(certfile, keyfile)) as smtp:
        with pytest.raises(DeliveryError, match="certificate does not verify"):
            send(_config(smtp, smtp_tls="starttls"), ChannelSecrets(), NOTICE)  # the system's trust store
        assert smtp.received == []


def test_a_server_without_starttls_is_a_config_error():
    with SmtpServer() as smtp:
        with pytest.raises(ConfigError, match="offers no STARTTLS"):
            send(_config(smtp, smtp_tls="starttls"), ChannelSecrets(), NOTICE)


def test_a_wrong_password_is_an_auth_error_without_the_password(caplog, cert):
    certfile, keyfile, trust = cert
    caplog.set_level(logging.DEBUG)
    with SmtpServer(users={"bot": "the-right-one"}, tls=(certfile, keyfile)) as smtp:
        with pytest.raises(AuthError) as info:
            send(_config(smtp, smtp_tls="starttls", smtp_user="bot"), ChannelSecrets(smtp_password=PASSWORD),
                 NOTICE, ssl_context=trust)
        assert smtp.failed_logins == 1  # not tried again: a wrong password stays wrong
    for text in (str(info.value), repr(info.value), caplog.text):
        assert not leaks_fragment(text, [PASSWORD]), text
    assert info.value.__context__ is None


def test_refused_recipients_are_a_delivery_error():
    with SmtpServer(reject={"me@example.org", "you@example.org"}) as smtp:
        with pytest.raises(DeliveryError, match="refused the recipient"):
            send(_config(smtp), ChannelSecrets(), NOTICE)


def test_nothing_listening_is_transient_after_the_retries():
    with SmtpServer() as gone:
        config = _config(gone)
    pauses = []
    with pytest.raises(TransientError, match="could not be reached"):
        send(config, ChannelSecrets(), NOTICE, sleep=pauses.append, backoff=0.25, timeout=2)
    assert pauses == [0.25, 0.5]


def test_a_password_is_never_sent_unencrypted_to_another_host():
    config = ChannelConfig(channel="smtp", smtp_host="mail.example.org", smtp_tls="none", smtp_user="bot",
                           mail_from="a@example.org", mail_to=("b@example.org",))
    with pytest.raises(ConfigError, match="unencrypted"):
        send(config, ChannelSecrets(smtp_password=PASSWORD), NOTICE)
