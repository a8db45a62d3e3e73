"""Posting a notice to a webhook (standard library only: it runs on the controller without extra packages).

One POST per try, a fresh signature each time; a throttled answer (429, a platform's rate-limit code) or a
server error (5xx), a timeout or a broken connection is tried again after a growing pause (or the
``Retry-After`` the server asked for, up to :data:`MAX_PAUSE_S`).  Redirects are not followed: the body
would go to another address.

Failure rules: ConfigError for a URL that cannot be posted to; AuthError for 401/403; TransientError when
the tries ran out on a retryable failure; :class:`~.notice.DeliveryError` for any other refusal.  No
message, log line or exception chain names the URL, which carries the bot's token: a message names the
host only, and whatever the server said is scrubbed of every secret (and of the URL's parts) first.
Blocks up to ``attempts × timeout`` plus the pauses; any thread.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import time
import urllib.error
import urllib.request
from typing import Callable

from workbench import __version__
from workbench.core.domain.errors import AuthError, ConfigError, TransientError, WorkbenchError
from workbench.core.notify.channel import ChannelConfig, ChannelSecrets, host_of
from workbench.core.notify.formats import payload, read_reply, signed
from workbench.core.notify.notice import DeliveryError, Notice
from workbench.core.providers.redaction import redact

log = logging.getLogger("workbench.notify")

TIMEOUT_S = 10.0
ATTEMPTS = 4
BACKOFF_S = 1.0
MAX_PAUSE_S = 30.0
#: bytes of an answer that are read (a bot's answer is a few dozen)
READ_LIMIT = 65536

NAMES = {"json": "webhook", "slack": "Slack webhook", "feishu": "Feishu/Lark bot", "dingtalk": "DingTalk robot",
         "wecom": "WeCom robot"}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001 - urllib's signature
        return None  # urllib then raises HTTPError for the 3xx


_OPENER = urllib.request.build_opener(_NoRedirect)


def post(config: ChannelConfig, secrets: ChannelSecrets, notice: Notice, *, timeout: float = TIMEOUT_S,
         attempts: int = ATTEMPTS, backoff: float = BACKOFF_S, sleep: Callable[[float], None] = time.sleep,
         clock: Callable[[], float] = time.time) -> None:
    """Send ``notice`` to the config's webhook in its format; returns once the platform took it (see the
    module docstring for the retries and the errors)."""
    url = secrets.webhook_url
    host = host_of(url)
    what = f"the {NAMES.get(config.format, 'webhook')} at {host}"
    scrub = secrets.values()
    if not url.lower().startswith(("https://", "http://")):
        raise ConfigError(f"{what}: the stored webhook URL is not an http(s) address",
                          hint="store it again: workbench notify set --profile P --secret-stdin")
    last: WorkbenchError | None = None
    retry_after: float | None = None
    for n in range(max(1, attempts)):
        if n:
            pause = min(MAX_PAUSE_S, retry_after if retry_after is not None else backoff * 2 ** (n - 1))
            log.info("retrying %s in %.1f s (try %d of %d)", what, pause, n + 1, attempts)
            sleep(pause)
        retry_after = None
        target, body = signed(config.format, url, payload(config.format, notice), secrets.signing_secret, clock())
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        request = urllib.request.Request(target, data=data, method="POST", headers={
            "Content-Type": "application/json; charset=utf-8", "User-Agent": f"cloud-gpu-workbench/{__version__}"})
        status, answer, error = _exchange(request, timeout)
        if error is not None:
            last = TransientError(f"{what} could not be reached: {redact(error, scrub)}",
                                  hint="check the machine's network; the message was not delivered")
            log.info("%s: %s", what, last.message)
            continue
        reply = read_reply(config.format, status, answer[0])
        if reply.ok:
            log.info("notice %s (%s) delivered to %s", notice.kind, notice.launch_id or "-", what)
            return
        said = redact(reply.said, scrub)
        text = f"{what} refused the message ({reply.code}{': ' + said if said else ''})"
        if reply.retry:
            retry_after = answer[1]
            last = TransientError(text, hint="it is throttled or failing now; try again later")
            log.info("%s", text)
            continue
        if status in (401, 403):
            raise AuthError(text, hint=reply.hint or "the bot refused this sender: check its URL and security "
                            "settings")
        raise DeliveryError(text, hint=reply.hint)
    assert last is not None
    raise last


def _exchange(request: urllib.request.Request, timeout: float) -> tuple[int, tuple[bytes, float | None], str | None]:
    """(status, (answer's first bytes, Retry-After seconds), None), or (0, (b"", None), why) when no answer came.

    The error is described in words built here (its type and reason), never with the request's URL;
    it is returned, not raised, so no exception chain holds the request."""
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            return response.status, (response.read(READ_LIMIT), None), None
    except urllib.error.HTTPError as exc:
        try:
            body = exc.read(READ_LIMIT)
        except OSError:
            body = b""
        finally:
            exc.close()
        return exc.code, (body, _retry_after(exc.headers.get("Retry-After") if exc.headers else None)), None
    except urllib.error.URLError as exc:
        reason = exc.reason
        why = "timed out" if isinstance(reason, (socket.timeout, TimeoutError)) else \
            f"{type(reason).__name__}: {getattr(reason, 'strerror', None) or reason}"
        return 0, (b"", None), why
    except (socket.timeout, TimeoutError):
        return 0, (b"", None), "timed out"
    except (OSError, ValueError, http.client.HTTPException) as exc:  # a connection reset mid-answer, an unparsable status line
        return 0, (b"", None), f"{type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}"


def _retry_after(raw: str | None) -> float | None:
    try:
        return max(0.0, float(raw)) if raw else None
    except ValueError:
        return None  # an HTTP date: the backoff's own pause is used
