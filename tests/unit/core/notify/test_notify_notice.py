"""Notices from recovery and guard events, a channel's config as profile settings, and the Notifier's
event filter (the sending itself: test_notify_webhook.py, test_notify_mail.py)."""

from __future__ import annotations

import pytest

from workbench.core.domain.errors import ConfigError
from workbench.core.lifecycle.guards import GuardEvent
from workbench.core.lifecycle.recovery import RecoveryEvent
from workbench.core.notify import EVENT_KINDS, ChannelConfig, ChannelSecrets, Notice, Notifier, notice_for
from workbench.core.notify.channel import from_settings, to_settings, without_notify
from workbench.core.notify.notice import kind_of, notice_from_event


def test_notice_for_fills_the_title_and_refuses_unknown_kinds():
    n = notice_for("budget", "100 % of the budget used", "l-1", "lab", ts=5)
    assert n == Notice("budget", "Budget reached: l-1", "100 % of the budget used", "l-1", 5.0, "lab")
    assert notice_for("finished", "done").title == "Job finished"
    with pytest.raises(ValueError):
        notice_for("exploded", "?")


@pytest.mark.parametrize("event, kind", [
    (RecoveryEvent("r", "l-2", 2, "relaunched", "warning", "attempt 2 runs as l-2", 1.0), "relaunched"),
    (RecoveryEvent("r", "l-2", 2, "gave_up", "error", "not relaunched", 1.0), "gave_up"),
    (RecoveryEvent("r", "l-2", 2, "not_recovered", "warning", "ended: exit 1", 1.0), "failed"),
    (RecoveryEvent("r", "l-2", 2, "relaunch_failed", "error", "retrying", 1.0), None),
    (GuardEvent("l-3", "finished", "pending", "info", "train finished (exit 0)", 1.0), "finished"),
    (GuardEvent("l-3", "finished", "pending", "warning", "train finished (exit 2)", 1.0), "failed"),
    (GuardEvent("l-3", "budget", "teardown", "warning", "budget of 5.00 USD reached", 1.0), "budget"),
    (GuardEvent("", "monthly_budget", "warn", "error", "100 % of the budget used", 1.0), "budget"),
    (GuardEvent("", "monthly_budget", "warn", "warning", "80 % of the budget used", 1.0), None),
    (GuardEvent("l-3", "idle", "teardown", "warning", "idle for 30 min", 1.0), None),
])
def test_recovery_and_guard_events_map_to_notice_kinds(event, kind):
    assert kind_of(event) == kind
    notice = notice_from_event(event, "lab")
    assert (notice.kind if notice else None) == kind
    if notice:
        assert (notice.text, notice.launch_id, notice.ts, notice.profile) == (event.message, event.launch_id, 1.0, "lab")


def test_config_round_trips_through_profile_settings_and_leaves_the_others_alone():
    config = ChannelConfig(channel="smtp", events=("failed", "gave_up"), smtp_host="mail.example.org",
                           smtp_port=2525, smtp_tls="ssl", mail_from="a@example.org",
                           mail_to=("b@example.org", "c@example.org"), smtp_user="a")
    settings = {"regions": "us-east-1", **to_settings(config)}
    assert settings["notify.events"] == "failed,gave_up" and settings["notify.mail_to"] == "b@example.org,c@example.org"
    assert from_settings("lab", settings) == config
    assert without_notify(settings) == {"regions": "us-east-1"}
    assert from_settings("lab", {}) == ChannelConfig()
    none = ChannelConfig(channel="webhook", events=())
    assert from_settings("lab", to_settings(none)).events == ()


def test_bad_settings_are_config_errors_naming_the_key():
    with pytest.raises(ConfigError, match="format must be one of json, slack"):
        from_settings("lab", {"notify.channel": "webhook", "notify.format": "teams"})
    with pytest.raises(ConfigError, match="unknown event"):
        from_settings("lab", {"notify.events": "finished,exploded"})
    with pytest.raises(ConfigError, match="smtp_port"):
        from_settings("lab", {"notify.smtp_port": "lots"})


def test_secrets_never_show_in_repr_and_reject_unknown_fields():
    s = ChannelSecrets(webhook_url="https://hooks.example.com/services/T000/B000/XXXXSECRETXXXX")
    assert "XXXX" not in repr(s) and "webhook_url" in repr(s)
    assert "XXXXSECRETXXXX" in s.values()  # a token in the URL's path is scrubbed on its own too
    with pytest.raises(ConfigError, match="unknown field"):
        ChannelSecrets.from_json({"password": "x"})


def test_notifier_sends_only_the_kinds_asked_for():
    sent = []
    config = ChannelConfig(channel="webhook", events=("failed", "gave_up"))
    notifier = Notifier(config, ChannelSecrets(webhook_url="https://h.example.com/x"), "lab",
                        sender=lambda c, s, n, **o: sent.append(n))
    assert notifier.notify(notice_for("finished", "ok", "l-1")) is False
    assert notifier.notify(notice_for("failed", "exit 2", "l-1")) is True
    assert notifier.notify_event(RecoveryEvent("r", "l-1", 1, "gave_up", "error", "no offer", 2.0)) is True
    assert notifier.notify_event(GuardEvent("l-1", "idle", "teardown", "warning", "idle", 2.0)) is False
    assert [(n.kind, n.profile) for n in sent] == [("failed", "lab"), ("gave_up", "lab")]
    assert Notifier(ChannelConfig(), ChannelSecrets()).wants("failed") is False
    assert set(EVENT_KINDS) == {"finished", "failed", "relaunched", "gave_up", "budget"}


def test_try_notify_returns_the_failure_instead_of_raising():
    config = ChannelConfig(channel="webhook")
    notifier = Notifier(config, ChannelSecrets(), "lab")  # no URL: the channel is incomplete
    error = notifier.try_notify(notice_for("failed", "exit 2"))
    assert isinstance(error, ConfigError) and "no webhook URL" in error.message
