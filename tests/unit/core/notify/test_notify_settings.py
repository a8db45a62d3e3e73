"""A profile's channel kept as the app keeps settings and secrets: the config in the profile's settings, the
secrets in the real Secret Service (scripts/with-secret-service.sh) under ``@notify/<profile>`` and nowhere
on disk; and the controller's file written from them."""

from __future__ import annotations

import json
import stat
import uuid

import keyring
import pytest

from secret_service import needs_secret_service
from workbench.core.domain.errors import ConfigError, NotFoundError
from workbench.core.domain.models import Profile
from workbench.core.notify import ChannelConfig, ChannelSecrets, load_secret_file, settings
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.credentials import SERVICE
from workbench.core.store.database import Store

URL = "https://open.feishu.cn/open-apis/bot/v2/hook/" + uuid.uuid4().hex
SIGNING = "feishu-signing-" + uuid.uuid4().hex


@pytest.fixture
def accounts(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    store = Store.open()
    acc = Accounts(store)
    name = f"lab-{uuid.uuid4().hex[:8]}"  # the daemon is shared by xdist workers
    acc.save_profile(Profile(name, "local", "local", settings={"keep": "me"}))
    acc.test_profile = name  # type: ignore[attr-defined]
    yield acc
    try:
        acc.credentials.delete(settings.KEYRING_OWNER, name)
    finally:
        store.close()


def _disk_text(tmp_path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in (tmp_path / "home").rglob("*") if p.is_file())


@needs_secret_service
def test_save_puts_the_secrets_in_the_keyring_and_the_rest_in_the_profile(accounts, tmp_path):
    name = accounts.test_profile
    config = ChannelConfig(channel="webhook", format="feishu", events=("failed", "budget"))
    stored = settings.save(accounts, name, config, ChannelSecrets(webhook_url=URL, signing_secret=SIGNING))
    assert stored.stored() == ["webhook_url", "signing_secret"]
    raw = keyring.get_keyring().get_password(SERVICE, f"@notify/{name}")
    assert json.loads(raw) == {"webhook_url": URL, "signing_secret": SIGNING}
    assert keyring.get_keyring().get_password(SERVICE, f"local/{name}") is None  # no cloud credential touched
    assert settings.load(accounts, name) == config
    assert settings.load_secrets(accounts, name) == ChannelSecrets(webhook_url=URL, signing_secret=SIGNING)
    profile = accounts.profile(name)
    assert profile.settings["keep"] == "me" and profile.settings["notify.format"] == "feishu"
    text = _disk_text(tmp_path)  # the store, its WAL, config/profiles.json, the log
    assert '"notify.format": "feishu"' in text  # the mirror of the profiles has the config …
    assert URL.rsplit("/", 1)[1] not in text and SIGNING not in text  # … and no secret is on disk


@needs_secret_service
def test_saving_again_keeps_stored_secrets_and_none_deletes_them(accounts):
    name = accounts.test_profile
    settings.save(accounts, name, ChannelConfig(channel="webhook", format="feishu"),
                  ChannelSecrets(webhook_url=URL, signing_secret=SIGNING))
    settings.save(accounts, name, ChannelConfig(channel="webhook", format="feishu", events=("failed",)))
    assert settings.load_secrets(accounts, name).signing_secret == SIGNING
    # a format that is never signed: the secret would be unused, so saving it is refused
    with pytest.raises(ConfigError, match="not signed"):
        settings.save(accounts, name, ChannelConfig(channel="webhook", format="slack"))
    settings.save(accounts, name, ChannelConfig(channel="webhook", format="slack"), ChannelSecrets(webhook_url=URL),
                  merge=False)
    assert settings.load_secrets(accounts, name) == ChannelSecrets(webhook_url=URL)
    settings.clear(accounts, name)
    assert settings.load(accounts, name) == ChannelConfig()
    assert accounts.credentials.get(settings.KEYRING_OWNER, name) == {}
    assert accounts.profile(name).settings == {"keep": "me"}


@needs_secret_service
def test_an_incomplete_channel_is_refused_before_anything_is_written(accounts):
    name = accounts.test_profile
    with pytest.raises(ConfigError, match="no webhook URL"):
        settings.save(accounts, name, ChannelConfig(channel="webhook"))
    with pytest.raises(ConfigError, match="mail needs smtp_host, mail_from, mail_to"):
        settings.save(accounts, name, ChannelConfig(channel="smtp"))
    assert accounts.credentials.get(settings.KEYRING_OWNER, name) == {}
    assert accounts.profile(name).settings == {"keep": "me"}


@needs_secret_service
def test_the_controller_file_holds_what_the_keyring_and_profile_hold(accounts, tmp_path):
    name = accounts.test_profile
    config = ChannelConfig(channel="smtp", smtp_host="smtp.example.org", mail_from="wb@example.org",
                           mail_to=("me@example.org",), smtp_user="wb")
    settings.save(accounts, name, config, ChannelSecrets(smtp_password=SIGNING))
    path = settings.write_controller_file(accounts, name, tmp_path / "controller-notify.json")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    loaded = load_secret_file(path)
    assert (loaded.profile, loaded.config, loaded.secrets) == (name, config, ChannelSecrets(smtp_password=SIGNING))


def test_an_unknown_profile_is_not_found(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    store = Store.open()
    try:
        with pytest.raises(NotFoundError):
            settings.load(Accounts(store), "nobody")
        assert settings.load(Accounts(store), "local") == ChannelConfig()  # the built-in profile has none yet
    finally:
        store.close()
