"""``workbench notify show|set|test`` in subprocesses: secrets only from stdin (never argv), stored in the
real Secret Service, sent to a real local webhook / SMTP server, never printed."""

from __future__ import annotations

import json

import pytest

from smtp_server import SmtpServer
from webhook_server import WebhookServer
from wbcli import needs_secret_service

TOKEN = "cli-token-0123456789abcdef"


def test_show_lists_every_profile_without_a_channel(wb):
    r = wb("notify", "show", "--json")
    assert r.rc == 0, r.err
    (entry,) = r.json["notify"]
    assert entry["profile"] == "local" and entry["config"]["channel"] == "none"
    assert entry["secrets_stored"] == [] and entry["target"] is None


def test_secrets_are_never_taken_from_the_command_line(wb):
    r = wb("notify", "set", "--profile", "local", "--channel", "webhook", "--webhook-url", "https://x/y")
    assert r.rc == 2 and "unrecognized arguments" in r.err


def test_test_without_a_channel_says_so(wb):
    r = wb("notify", "test", "--profile", "local", "--json")
    assert r.rc == 1 and r.json["error"]["kind"] == "config"
    assert "no notification channel" in r.json["error"]["message"]
    r = wb("notify", "test", "--json")
    assert r.rc == 1 and "--profile" in r.json["error"]["message"]


@needs_secret_service
def test_set_show_test_with_a_webhook(wb):
    with WebhookServer() as hook:
        url = hook.url(f"/robot/send?access_token={TOKEN}")
        r = wb("notify", "set", "--profile", "local", "--channel", "webhook", "--format", "dingtalk",
               "--events", "failed,gave_up", "--secret-stdin", "--json",
               stdin=json.dumps({"webhook_url": url, "signing_secret": "SEC" + TOKEN}))
        assert r.rc == 0, r.err
        assert r.json["secrets_stored"] == ["webhook_url", "signing_secret"]
        assert r.json["target"] == "dingtalk webhook at 127.0.0.1"
        shown = wb("notify", "show", "--profile", "local", "--json")
        assert shown.json["notify"][0]["config"]["events"] == ["failed", "gave_up"]
        r = wb("notify", "test", "--json")  # the one profile with a channel
        assert r.rc == 0, r.err
        assert r.json == {"sent": True, "profile": "local", "channel": "webhook", "kind": "finished",
                          "target": "dingtalk webhook at 127.0.0.1"}
        (hit,) = hook.requests
        assert hit.query["access_token"] == [TOKEN] and "sign" in hit.query
        assert hit.json["text"]["content"].startswith("[Workbench] Test notice (finished)")
        hook.default = (200, json.dumps({"errcode": 310000, "errmsg": f"keywords not in content {TOKEN}"}).encode(), {})
        r = wb("notify", "test", "--json")
        assert r.rc == 3 and r.json["error"]["kind"] == "delivery"
        for out in (r.out, r.err, shown.out):
            assert TOKEN not in out
        profiles = wb("profiles", "list", "--json").json["profiles"]
        assert TOKEN not in json.dumps(profiles) and profiles[0]["settings"]["notify.format"] == "dingtalk"
    r = wb("notify", "set", "--profile", "local", "--channel", "none", "--json")
    assert r.rc == 0 and r.json["secrets_stored"] == []


@needs_secret_service
def test_set_and_test_mail_with_the_password_on_stdin(wb):
    with SmtpServer(users={"wb": "mail-pass-0123456789"}, require_auth=True) as smtp:
        r = wb("notify", "set", "--profile", "local", "--channel", "smtp", "--smtp-host", "127.0.0.1",
               "--smtp-port", str(smtp.port), "--smtp-tls", "none", "--mail-from", "wb@example.org",
               "--mail-to", "me@example.org", "--smtp-user", "wb", "--secret-stdin", stdin="mail-pass-0123456789\n")
        assert r.rc == 0, r.err
        assert "mail-pass" not in r.out
        r = wb("notify", "test", "--profile", "local", "--kind", "budget")
        assert r.rc == 0, r.err
        (got,) = smtp.wait_for(1)
        assert got.user == "wb" and got.message["Subject"] == "[Workbench] Test notice (budget)"
    wb("notify", "set", "--profile", "local", "--channel", "none")


@needs_secret_service
def test_a_channel_without_its_secret_is_refused(wb):
    r = wb("notify", "set", "--profile", "local", "--channel", "webhook", "--json", stdin="")
    assert r.rc == 1 and r.json["error"]["kind"] == "config" and "no webhook URL" in r.json["error"]["message"]
