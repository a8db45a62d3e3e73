"""Told while away: a profile's notices (finished, failed, relaunched, gave up, budget reached) sent to a
webhook (generic JSON, Slack, Feishu/Lark, DingTalk, WeCom) or by mail.

Modules: ``notice`` (what is told, from a recovery / guard event), ``channel`` (a profile's channel: its
config and its secrets), ``formats`` (each platform's body, signature and answer), ``webhook`` and
``mail`` (sending, standard library only: the controller runs it without extra packages), ``notifier``
(``send`` and the event filter), ``settings`` (the profile's settings and the keyring) and
``secret_file`` (the controller's 0600 copy).  No Qt; ``settings`` is imported on its own (it needs the
accounts).
"""

from __future__ import annotations

from workbench.core.notify.channel import CHANNELS, FORMATS, TLS_MODES, ChannelConfig, ChannelSecrets
from workbench.core.notify.notice import EVENT_KINDS, DeliveryError, Notice, notice_for, notice_from_event
from workbench.core.notify.notifier import Notifier, send
from workbench.core.notify.secret_file import SecretFile, load_secret_file, write_secret_file

__all__ = ["CHANNELS", "EVENT_KINDS", "FORMATS", "TLS_MODES", "ChannelConfig", "ChannelSecrets", "DeliveryError",
           "Notice", "Notifier", "SecretFile", "load_secret_file", "notice_for", "notice_from_event", "send",
           "write_secret_file"]
