"""The webhook formats: the body each platform's bot takes, its signature, and how it says no.

* ``json``: the notice itself, ``{event, title, text, launch_id, ts, profile}`` (:meth:`Notice.to_json`);
  any 2xx answer is success.
* ``slack`` (incoming webhook): ``{"text": …}`` in Slack's mrkdwn (``&``, ``<``, ``>`` escaped); Slack
  answers ``ok``, or a 4xx whose body names the error (``invalid_payload``, ``no_service`` …).
* ``feishu`` (Feishu / Lark custom bot): ``{"msg_type": "text", "content": {"text": …}}``; with a signing
  secret also ``timestamp`` (seconds) and ``sign`` = base64(HMAC-SHA256(key = "{timestamp}\\n{secret}",
  message empty)) in the body.  Answers HTTP 200 with ``{"code": 0}`` (older bots ``{"StatusCode": 0}``);
  any other code is a refusal (19021: the signature or the clock is off).
* ``dingtalk`` (custom robot): ``{"msgtype": "text", "text": {"content": …}}``; with a signing secret the
  URL also gets ``timestamp`` (milliseconds) and ``sign`` = base64(HMAC-SHA256(key = secret,
  message = "{timestamp}\\n{secret}")), URL-encoded.  Answers 200 with ``{"errcode": 0}``; 310000: the
  robot's security settings (keyword, signature, IP) refused the message.
* ``wecom`` (WeCom group robot): ``{"msgtype": "text", "text": {"content": …}}`` (at most 2048 bytes);
  answers 200 with ``{"errcode": 0}``.

Plain Python, no I/O: :mod:`.webhook` sends what this builds.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

from workbench.core.notify.notice import Notice

#: text limits of the platforms' text messages (WeCom: 2048 bytes of UTF-8; the others are far larger)
MAX_BYTES = {"wecom": 2048, "dingtalk": 20000, "feishu": 30000, "slack": 39000}
#: error codes in a 200 answer that mean "too many messages, try again later"
RATE_LIMIT_CODES = {"feishu": {9499, 11232, 11233}, "dingtalk": {130101, 410100}, "wecom": {45009, 45033}}
#: what to do about a refusal, by platform and code
HINTS = {
    ("feishu", 19021): "the signing secret is wrong, or this computer's clock is off by over an hour",
    ("feishu", 19022): "the bot's IP allowlist does not include this machine",
    ("feishu", 19024): "the message lacks the bot's keyword: add it to the bot's security settings or remove it",
    ("dingtalk", 310000): "the robot's security settings (keyword, signature or IP range) refused the message: "
                          "check the signing secret, or add the keyword \"Workbench\"",
    ("dingtalk", 300001): "the robot's access token is wrong or the robot was removed: store its URL again",
    ("wecom", 93000): "the robot's webhook key is wrong or the robot was removed: store its URL again",
}


def _clip(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit - 3].decode("utf-8", "ignore") + "..."


def slack_escape(text: str) -> str:
    """Slack's three control characters escaped, as its message formatting asks."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def feishu_sign(secret: str, timestamp: int) -> str:
    """Feishu's signature: base64 of HMAC-SHA256 keyed by "{timestamp}\\n{secret}" over an empty message."""
    key = f"{timestamp}\n{secret}".encode("utf-8")
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode("ascii")


def dingtalk_sign(secret: str, timestamp_ms: int) -> str:
    """DingTalk's signature (before URL encoding): base64 of HMAC-SHA256 keyed by the secret over
    "{timestamp}\\n{secret}"."""
    message = f"{timestamp_ms}\n{secret}".encode("utf-8")
    return base64.b64encode(hmac.new(secret.encode("utf-8"), message, hashlib.sha256).digest()).decode("ascii")


def payload(fmt: str, notice: Notice) -> dict[str, object]:
    """The JSON body of a notice in webhook format ``fmt`` (unsigned)."""
    if fmt == "json":
        return notice.to_json()
    text = notice.body_text()
    if fmt == "slack":
        rest = text.split("\n", 1)[1] if "\n" in text else ""
        return {"text": _clip(f"*{slack_escape(notice.title)}*\n{slack_escape(rest)}".rstrip(), MAX_BYTES["slack"])}
    if fmt == "feishu":
        return {"msg_type": "text", "content": {"text": _clip(text, MAX_BYTES["feishu"])}}
    if fmt in ("dingtalk", "wecom"):
        return {"msgtype": "text", "text": {"content": _clip(text, MAX_BYTES[fmt])}}
    raise ValueError(f"unknown webhook format {fmt!r}")


def signed(fmt: str, url: str, body: dict[str, object], secret: str, now: float) -> tuple[str, dict[str, object]]:
    """(URL, body) with ``fmt``'s signature for ``secret`` at time ``now``; unchanged without a secret."""
    if not secret:
        return url, body
    if fmt == "feishu":
        ts = int(now)
        return url, {"timestamp": str(ts), "sign": feishu_sign(secret, ts), **body}
    if fmt == "dingtalk":
        ts_ms = int(now * 1000)
        parts = urlsplit(url)
        query = "&".join(q for q in (parts.query, urlencode({"timestamp": ts_ms, "sign": dingtalk_sign(secret, ts_ms)}))
                         if q)
        return urlunsplit(parts._replace(query=query)), body
    return url, body


@dataclass(frozen=True)
class Reply:
    """What a webhook's answer means: ``ok``; else ``retry`` (throttled, a server error) and what it said."""

    ok: bool
    retry: bool = False
    code: str = ""
    said: str = ""
    hint: str | None = None


def read_reply(fmt: str, status: int, body: bytes) -> Reply:
    """Judge an answer of HTTP ``status`` with ``body`` (first bytes of it) for webhook format ``fmt``."""
    text = body.decode("utf-8", "replace").strip()
    if status == 429 or status >= 500:
        return Reply(False, True, f"HTTP {status}", _short(text))
    if not 200 <= status < 300:
        hint = "the webhook URL is wrong or the bot was removed: store its URL again" if status in (404, 410) else None
        return Reply(False, False, f"HTTP {status}", _short(text), hint)
    if fmt == "slack":
        return Reply(True) if text in ("", "ok") else Reply(False, False, "slack", _short(text))
    if fmt not in ("feishu", "dingtalk", "wecom"):
        return Reply(True)
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return Reply(False, False, "not JSON", _short(text))
    keys = ("code", "StatusCode") if fmt == "feishu" else ("errcode",)
    raw = next((data[k] for k in keys if k in data), 0)
    try:
        code = int(raw)
    except (TypeError, ValueError):
        code = -1
    if code == 0:
        return Reply(True)
    said = str(data.get("msg") or data.get("StatusMessage") or data.get("errmsg") or "")
    return Reply(False, code in RATE_LIMIT_CODES.get(fmt, ()), f"code {code}", _short(said), HINTS.get((fmt, code)))


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
