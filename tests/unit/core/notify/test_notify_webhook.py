"""Webhook notices against a real HTTP server on 127.0.0.1 (tests/support/webhook_server.py): the exact
body of each format, signatures that verify, error codes in 200 answers, throttling retried, and no
secret in any error or log line."""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import time

import pytest

from webhook_server import WebhookServer
from workbench.core.domain.errors import AuthError, ConfigError, TransientError
from workbench.core.notify import ChannelConfig, ChannelSecrets, DeliveryError, notice_for, send
from workbench.core.providers.redaction import leaks_fragment

TOKEN = "tok3n-abcdef0123456789"
SIGNING = "SECsigning-secret-0123456789abcdef"
NOTICE = notice_for("relaunched", "train: attempt 1 ended (spot taken back); attempt 2 runs as l-2", "l-1",
                    "lab-aws", ts=1_700_000_000.0)
BODY_TEXT = ("[Workbench] Job relaunched: l-1\ntrain: attempt 1 ended (spot taken back); attempt 2 runs as l-2\n"
             "launch l-1, profile lab-aws\n2023-11-14 22:13:20 UTC")


def _send(hook: WebhookServer, fmt: str, path: str = f"/hook/{TOKEN}", signing: str = "", **options):
    options.setdefault("sleep", lambda s: None)
    send(ChannelConfig(channel="webhook", format=fmt), ChannelSecrets(webhook_url=hook.url(path),
                                                                      signing_secret=signing), NOTICE, **options)


@pytest.fixture
def hook():
    with WebhookServer() as server:
        yield server


def test_generic_json_posts_the_notice_itself(hook):
    _send(hook, "json")
    (hit,) = hook.requests
    assert hit.method == "POST" and hit.path == f"/hook/{TOKEN}"
    assert hit.headers["Content-Type"] == "application/json; charset=utf-8"
    assert hit.json == {"event": "relaunched", "title": "Job relaunched: l-1",
                        "text": "train: attempt 1 ended (spot taken back); attempt 2 runs as l-2",
                        "launch_id": "l-1", "ts": 1_700_000_000.0, "profile": "lab-aws"}


def test_slack_gets_text_with_its_control_characters_escaped(hook):
    hook.default = (200, b"ok", {})
    odd = notice_for("failed", "a <b> & c", "l-9", "p", ts=0)
    send(ChannelConfig(channel="webhook", format="slack"), ChannelSecrets(webhook_url=hook.url()), odd)
    assert hook.requests[0].json == {"text": "*Job failed: l-9*\na &lt;b&gt; &amp; c\nlaunch l-9, profile p\n"
                                             "1970-01-01 00:00:00 UTC"}


def test_slack_error_text_is_a_refusal(hook):
    hook.answer(400, "invalid_payload")
    with pytest.raises(DeliveryError, match="Slack webhook at 127.0.0.1 refused the message \\(HTTP 400: invalid_payload"):
        _send(hook, "slack")


def test_feishu_body_and_signature_verify(hook):
    hook.default = (200, b'{"code": 0, "msg": "success", "data": {}}', {})
    before = int(time.time())
    _send(hook, "feishu", signing=SIGNING)
    body = hook.requests[0].json
    assert set(body) == {"timestamp", "sign", "msg_type", "content"}
    assert body["msg_type"] == "text" and body["content"] == {"text": BODY_TEXT}
    ts = int(body["timestamp"])
    assert before <= ts <= time.time() + 1
    key = f"{ts}\n{SIGNING}".encode()
    assert base64.b64decode(body["sign"]) == hmac.new(key, b"", hashlib.sha256).digest()


def test_feishu_without_a_secret_is_not_signed(hook):
    hook.default = (200, b'{"StatusCode": 0, "StatusMessage": "success"}', {})
    _send(hook, "feishu")
    assert hook.requests[0].json == {"msg_type": "text", "content": {"text": BODY_TEXT}}


def test_dingtalk_body_and_signature_in_the_query_verify(hook):
    _send(hook, "dingtalk", path=f"/robot/send?access_token={TOKEN}", signing=SIGNING)
    hit = hook.requests[0]
    assert hit.json == {"msgtype": "text", "text": {"content": BODY_TEXT}}
    assert hit.query["access_token"] == [TOKEN]
    ts = hit.query["timestamp"][0]
    assert abs(int(ts) / 1000 - time.time()) < 5  # milliseconds
    expected = hmac.new(SIGNING.encode(), f"{ts}\n{SIGNING}".encode(), hashlib.sha256).digest()
    assert base64.b64decode(hit.query["sign"][0]) == expected  # parse_qs undid the URL encoding


def test_wecom_body_is_clipped_to_2048_bytes(hook):
    _send(hook, "wecom", path=f"/cgi-bin/webhook/send?key={TOKEN}")
    assert hook.requests[0].json == {"msgtype": "text", "text": {"content": BODY_TEXT}}
    long = notice_for("failed", "界" * 2000, "l-1", ts=0)
    send(ChannelConfig(channel="webhook", format="wecom"), ChannelSecrets(webhook_url=hook.url()), long)
    content = hook.requests[1].json["text"]["content"]
    assert len(content.encode()) <= 2048 and content.endswith("...")


@pytest.mark.parametrize("fmt, answer, code, hint", [
    ("dingtalk", {"errcode": 310000, "errmsg": "keywords not in content"}, "code 310000", "security settings"),
    ("wecom", {"errcode": 93000, "errmsg": "invalid webhook url"}, "code 93000", "store its URL again"),
    ("feishu", {"code": 19021, "msg": "sign match fail or timestamp is not within one hour"}, "code 19021",
     "signing secret is wrong"),
])
def test_an_error_code_in_a_200_answer_is_a_refusal(hook, fmt, answer, code, hint):
    hook.default = (200, b"", {})
    hook.answer(200, answer)
    with pytest.raises(DeliveryError) as info:
        _send(hook, fmt)
    assert code in info.value.message and (answer.get("errmsg") or answer.get("msg")) in info.value.message
    assert hint in (info.value.hint or "")
    assert info.value.kind == "delivery" and info.value.exit_code == 3
    assert len(hook.requests) == 1  # a refusal is not tried again


def test_429_then_200_is_retried_after_the_pause_the_server_asked(hook):
    hook.answer(429, "rate limited", {"Retry-After": "3"})
    pauses = []
    _send(hook, "json", sleep=pauses.append)
    assert len(hook.requests) == 2 and pauses == [3.0]


def test_a_platform_rate_limit_code_is_retried_with_backoff_and_a_fresh_signature(hook):
    hook.answer(200, {"errcode": 130101, "errmsg": "send too fast"})
    hook.answer(503, "busy")
    pauses = []
    _send(hook, "dingtalk", signing=SIGNING, sleep=pauses.append, backoff=0.5)
    assert len(hook.requests) == 3 and pauses == [0.5, 1.0]


def test_server_errors_until_the_tries_run_out_are_transient(hook):
    hook.default = (502, b"bad gateway", {})
    with pytest.raises(TransientError, match="HTTP 502"):
        _send(hook, "json", attempts=3)
    assert len(hook.requests) == 3


def test_403_is_an_auth_error_and_404_says_to_store_the_url_again(hook):
    hook.answer(403, "forbidden")
    with pytest.raises(AuthError):
        _send(hook, "json")
    hook.answer(404, "no_service")
    with pytest.raises(DeliveryError) as info:
        _send(hook, "slack")
    assert "store its URL again" in info.value.hint


def test_a_redirect_is_not_followed(hook):
    hook.answer(307, "", {"Location": "http://127.0.0.1:9/elsewhere"})
    with pytest.raises(DeliveryError, match="HTTP 307"):
        _send(hook, "json")
    assert len(hook.requests) == 1


def test_a_server_that_does_not_answer_in_time_is_transient():
    with WebhookServer(delay=2.0) as slow:
        with pytest.raises(TransientError, match="timed out"):
            _send(slow, "json", timeout=0.3, attempts=2)


def test_nothing_listening_is_transient():
    with WebhookServer() as gone:
        url = gone.url(f"/hook/{TOKEN}")
    with pytest.raises(TransientError, match="could not be reached"):
        send(ChannelConfig(channel="webhook"), ChannelSecrets(webhook_url=url), NOTICE, attempts=1)


def test_no_token_or_secret_in_errors_or_log_even_when_the_server_echoes_them(hook, caplog):
    caplog.set_level(logging.DEBUG)
    url = hook.url(f"/robot/send?access_token={TOKEN}")
    hook.default = (200, f'{{"errcode": 300001, "errmsg": "token {TOKEN} invalid, secret {SIGNING}"}}'.encode(), {})
    with pytest.raises(DeliveryError) as info:
        send(ChannelConfig(channel="webhook", format="dingtalk"),
             ChannelSecrets(webhook_url=url, signing_secret=SIGNING), NOTICE)
    hook.default = (500, f"upstream {url} failed".encode(), {})
    with pytest.raises(TransientError) as info2:
        send(ChannelConfig(channel="webhook"), ChannelSecrets(webhook_url=url), NOTICE, sleep=lambda s: None)
    texts = [str(info.value), str(info2.value), repr(info.value), caplog.text]
    for text in texts:
        assert not leaks_fragment(text, [TOKEN, SIGNING]) and url not in text, text  # the host alone is shown
    assert info.value.__cause__ is None and info.value.__context__ is None
    assert "****" in str(info.value)


def test_a_channel_set_up_wrong_is_a_config_error_before_any_request(hook):
    with pytest.raises(ConfigError, match="no webhook URL"):
        send(ChannelConfig(channel="webhook"), ChannelSecrets(), NOTICE)
    with pytest.raises(ConfigError, match="plain http"):
        send(ChannelConfig(channel="webhook"), ChannelSecrets(webhook_url=f"http://example.com/{TOKEN}"), NOTICE)
    with pytest.raises(ConfigError, match="not signed"):
        send(ChannelConfig(channel="webhook", format="wecom"),
             ChannelSecrets(webhook_url=hook.url(), signing_secret=SIGNING), NOTICE)
    with pytest.raises(ConfigError, match="no notification channel"):
        send(ChannelConfig(), ChannelSecrets(), NOTICE)
    assert hook.requests == []
