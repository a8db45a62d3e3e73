"""The controller's 0600 file: created 0600 before a byte is written, replaced atomically, refused when
others may read it, and never quoted in an error."""

from __future__ import annotations

import os
import stat

import pytest

from workbench.core.domain.errors import ConfigError
from workbench.core.notify import ChannelConfig, ChannelSecrets, Notifier, load_secret_file, write_secret_file
from workbench.core.notify import secret_file

URL = "https://oapi.dingtalk.com/robot/send?access_token=0123456789abcdef0123456789abcdef"
SECRETS = ChannelSecrets(webhook_url=URL, signing_secret="SEC0123456789abcdef")
CONFIG = ChannelConfig(channel="webhook", format="dingtalk", events=("failed", "gave_up", "budget"))


def test_round_trip_with_mode_0600_whatever_the_umask(tmp_path):
    old = os.umask(0)
    try:
        path = write_secret_file(tmp_path / "notify.json", "lab", CONFIG, SECRETS)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    loaded = load_secret_file(path)
    assert (loaded.profile, loaded.config, loaded.secrets) == ("lab", CONFIG, SECRETS)
    assert [p.name for p in tmp_path.iterdir()] == ["notify.json"]  # no temporary file left
    notifier = Notifier.from_file(path)
    assert notifier.profile == "lab" and notifier.wants("budget") and not notifier.wants("finished")


def test_the_file_is_0600_before_its_content_is_written(tmp_path, monkeypatch):
    seen = []
    real_fdopen = os.fdopen

    def fdopen(fd, *a, **kw):
        st = os.fstat(fd)
        seen.append((stat.S_IMODE(st.st_mode), st.st_size))
        return real_fdopen(fd, *a, **kw)

    monkeypatch.setattr(secret_file.os, "fdopen", fdopen)
    write_secret_file(tmp_path / "notify.json", "lab", CONFIG, SECRETS)
    assert seen[0] == (0o600, 0)


def test_rewriting_replaces_the_file_whole(tmp_path):
    path = write_secret_file(tmp_path / "n.json", "lab", CONFIG, SECRETS)
    inode = path.stat().st_ino
    write_secret_file(path, "lab", ChannelConfig(channel="smtp", smtp_host="127.0.0.1", mail_from="a@b",
                                                 mail_to=("c@d",)), ChannelSecrets())
    assert path.stat().st_ino != inode  # a new file renamed over the old one
    assert load_secret_file(path).config.channel == "smtp"
    assert URL not in path.read_text()


def test_a_file_others_may_read_is_refused(tmp_path):
    path = write_secret_file(tmp_path / "n.json", "lab", CONFIG, SECRETS)
    path.chmod(0o644)
    with pytest.raises(ConfigError, match="may be read by others \\(mode 0644\\)"):
        load_secret_file(path)


def test_a_damaged_or_missing_file_is_named_never_quoted(tmp_path):
    path = tmp_path / "n.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, f'{{"version": 1, "secrets": "{URL}"'.encode())
    os.close(fd)
    with pytest.raises(ConfigError) as info:
        load_secret_file(path)
    assert "access_token" not in str(info.value) and str(path) in str(info.value)
    with pytest.raises(ConfigError, match="no notification file"):
        load_secret_file(tmp_path / "missing.json")


def test_a_symlink_is_not_followed(tmp_path):
    real = write_secret_file(tmp_path / "real.json", "lab", CONFIG, SECRETS)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with pytest.raises(ConfigError):
        load_secret_file(link)
