"""Mailing a notice over SMTP (standard library only: it runs on the controller without extra packages).

The TLS mode is the config's: ``starttls`` (plain connection, then STARTTLS before anything else is
said; the usual port 587), ``ssl`` (TLS from the first byte; port 465) or ``none`` (a relay on the same
machine or network; a password is never sent that way to another host: :func:`~.channel.validate`).
Certificates are checked against the system's trust store (``ssl_context`` replaces it: tests).
A connection that fails, a timeout or a 4xx answer (the server's "try later") is tried again with a
growing pause.

Failure rules: ConfigError (the server offers no STARTTLS); AuthError (the user or password was refused);
TransientError (tries ran out on a connection failure or a 4xx); :class:`~.notice.DeliveryError` (a
recipient, the sender or the message refused, a certificate that does not verify).  Messages never hold
the password.  Blocks; any thread.
"""

from __future__ import annotations

import email.utils
import logging
import smtplib
import socket
import ssl
import time
from email.message import EmailMessage
from typing import Callable

from workbench.core.domain.errors import AuthError, ConfigError, TransientError, WorkbenchError
from workbench.core.notify.channel import ChannelConfig, ChannelSecrets
from workbench.core.notify.notice import DeliveryError, Notice
from workbench.core.providers.redaction import redact

log = logging.getLogger("workbench.notify")

TIMEOUT_S = 20.0
ATTEMPTS = 3
BACKOFF_S = 2.0
SUBJECT_PREFIX = "[Workbench] "


def message(config: ChannelConfig, notice: Notice) -> EmailMessage:
    """The mail for ``notice``: the subject is its title, the body its plain text."""
    msg = EmailMessage()
    msg["Subject"] = SUBJECT_PREFIX + notice.title
    msg["From"] = config.mail_from
    msg["To"] = ", ".join(config.mail_to)
    msg["Date"] = email.utils.formatdate(notice.ts or time.time(), usegmt=True)
    msg["Message-ID"] = email.utils.make_msgid(domain=config.mail_from.rpartition("@")[2] or None)
    msg["X-Workbench-Event"] = notice.kind
    msg.set_content(notice.body_text() + "\n")
    return msg


def send_mail(config: ChannelConfig, secrets: ChannelSecrets, notice: Notice, *, timeout: float = TIMEOUT_S,
              attempts: int = ATTEMPTS, backoff: float = BACKOFF_S, sleep: Callable[[float], None] = time.sleep,
              ssl_context: ssl.SSLContext | None = None) -> None:
    """Mail ``notice`` to the config's recipients (see the module docstring for retries and errors)."""
    what = f"the mail server {config.smtp_host}:{config.port}"
    msg = message(config, notice)
    last: WorkbenchError | None = None
    for n in range(max(1, attempts)):
        if n:
            sleep(backoff * 2 ** (n - 1))
        error = _send_once(config, secrets, msg, what, timeout, ssl_context)
        if error is None:
            log.info("notice %s (%s) mailed through %s", notice.kind, notice.launch_id or "-", what)
            return
        if not isinstance(error, TransientError):
            raise error
        log.info("%s", error.message)
        last = error
    assert last is not None
    raise last


def _send_once(config: ChannelConfig, secrets: ChannelSecrets, msg: EmailMessage, what: str, timeout: float,
               ssl_context: ssl.SSLContext | None) -> WorkbenchError | None:
    """One connection: None when the server took the mail, else the error (returned, so no chain holds it)."""
    scrub = secrets.values()
    context = ssl_context or ssl.create_default_context()
    try:
        if config.smtp_tls == "ssl":
            client: smtplib.SMTP = smtplib.SMTP_SSL(config.smtp_host, config.port, timeout=timeout, context=context)
        else:
            client = smtplib.SMTP(config.smtp_host, config.port, timeout=timeout)
        with client:
            client.ehlo()
            if config.smtp_tls == "starttls":
                if not client.has_extn("starttls"):
                    return ConfigError(f"{what} offers no STARTTLS",
                                       hint="set smtp_tls to ssl (port 465), or none for a relay on this network")
                client.starttls(context=context)
                client.ehlo()
            if config.smtp_user:
                client.login(config.smtp_user, secrets.smtp_password)
            client.send_message(msg)
        return None
    except smtplib.SMTPAuthenticationError as exc:
        return AuthError(f"{what} refused the login of {config.smtp_user} ({exc.smtp_code})",
                         hint="check the user and store the password again (an app password where the "
                              "provider asks for one)")
    except smtplib.SMTPNotSupportedError:
        return ConfigError(f"{what} does not support what was asked (AUTH or STARTTLS)",
                           hint="check smtp_tls and smtp_user")
    except smtplib.SMTPRecipientsRefused as exc:
        codes = {r: c for r, (c, _) in exc.recipients.items()}
        if codes and all(400 <= c < 500 for c in codes.values()):
            return TransientError(f"{what} deferred the recipients {', '.join(codes)}")
        return DeliveryError(f"{what} refused the recipient(s) {', '.join(codes)}", hint="check mail_to")
    except smtplib.SMTPResponseException as exc:  # sender refused, data refused, …
        said = redact(exc.smtp_error.decode("utf-8", "replace") if isinstance(exc.smtp_error, bytes)
                      else str(exc.smtp_error), scrub)
        text = f"{what} refused the mail ({exc.smtp_code} {' '.join(said.split())[:200]})"
        return TransientError(text) if 400 <= exc.smtp_code < 500 else DeliveryError(text)
    except ssl.SSLCertVerificationError as exc:
        return DeliveryError(f"{what}: its certificate does not verify ({exc.verify_message})",
                             hint="check smtp_host: it must be the name on the server's certificate")
    except (smtplib.SMTPServerDisconnected, smtplib.SMTPConnectError, socket.timeout, TimeoutError,
            ConnectionError, ssl.SSLError) as exc:
        return TransientError(f"{what} could not be reached ({type(exc).__name__})",
                              hint="check the host, port and TLS mode; the message was not delivered")
    except smtplib.SMTPException as exc:
        return DeliveryError(f"{what} failed: {type(exc).__name__}")
    except OSError as exc:
        return TransientError(f"{what} could not be reached ({exc.strerror or type(exc).__name__})",
                              hint="check the host and port; the message was not delivered")
