"""Settings and sign-in: AccessKey, RAM role through STS, an Alibaba Cloud CLI profile; clear errors without secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alibaba_ecs import Account, AlibabaServer
from workbench.core.domain.errors import AuthError, ConfigError
from workbench.core.domain.models import Profile


def test_check_credentials_names_the_account(make_provider, account: Account):
    who = make_provider().check_credentials()
    assert who.account == account.account_id
    assert who.principal == f"acs:ram::{account.account_id}:user/workbench"
    assert "china site" in who.display and "AccessKey" in who.display


@pytest.mark.parametrize("secrets, words", [
    ({"access_key_id": "LTAI5tNoSuchKey00000000", "access_key_secret": "x" * 30}, "does not know this AccessKey ID"),
    (None, "secret does not match"),
    ({}, "no AccessKey ID and AccessKey secret stored"),
])
def test_bad_credentials_say_why_never_the_secret(make_provider, account: Account, secrets, words):
    if secrets is None:
        secrets = {"access_key_id": account.access_key_id, "access_key_secret": "wrong-secret-value-123"}
    with pytest.raises(AuthError) as err:
        make_provider(secrets=secrets).check_credentials()
    text = f"{err.value.message} {err.value.hint}"
    assert words in text
    for value in secrets.values():
        if "secret" in value or value.startswith("x"):
            assert value not in text
    assert account.secret not in text


def test_missing_permission_names_the_action(ali: AlibabaServer, make_provider):
    reader = ali.new_account(actions=("sts:*",))
    with pytest.raises(AuthError) as err:
        make_provider(acct=reader).check_credentials()
    assert "ecs:DescribeRegions" in err.value.message and "alibaba-ram-policy.json" in err.value.hint


def test_ram_role_is_assumed_through_sts(ali: AlibabaServer, account: Account, make_provider):
    arn = f"acs:ram::{account.account_id}:role/workbench-runner"
    account.roles[arn] = ("ecs:*", "vpc:*")
    who = make_provider(auth="ram_role", role_arn=arn).check_credentials()
    assert who.principal.endswith("assumed-role/workbench-runner/cloud-gpu-workbench")
    assert "RAM role" in who.display
    assert ali.calls(account, "sts:AssumeRole")[-1].status == 200
    with pytest.raises(AuthError) as err:
        make_provider(auth="ram_role", role_arn=f"acs:ram::{account.account_id}:role/absent").check_credentials()
    assert "role to assume does not exist" in err.value.message


def test_cli_profile(tmp_path: Path, account: Account, make_provider):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"current": "work", "profiles": [
        {"name": "default", "mode": "AK", "access_key_id": "LTAI5tOther000000000", "access_key_secret": "other"},
        {"name": "work", "mode": "AK", "access_key_id": account.access_key_id, "access_key_secret": account.secret,
         "region_id": "cn-hangzhou"}]}), encoding="utf-8")
    who = make_provider(secrets={}, auth="cli", cli_config=str(config)).check_credentials()
    assert who.account == account.account_id and "CLI profile work" in who.display
    with pytest.raises(ConfigError) as err:
        make_provider(secrets={}, auth="cli", cli_config=str(config), cli_profile="nope").check_credentials()
    assert "has no profile 'nope'" in err.value.message and "default, work" in err.value.message
    config.write_text(json.dumps({"profiles": [{"name": "default", "mode": "EcsRamRole", "ram_role_name": "r"}]}))
    with pytest.raises(AuthError) as mode:
        make_provider(secrets={}, auth="cli", cli_config=str(config)).check_credentials()
    assert "mode EcsRamRole" in mode.value.message


@pytest.mark.parametrize("settings, words", [
    ({"regions": "hangzhou!"}, "not an Alibaba Cloud region id"),
    ({"auth": "ram_role"}, "needs role_arn"),
    ({"role_arn": "arn:aws:iam::1:role/x"}, "role_arn must look like"),
    ({"ssh_cidr": "0.0.0.0/0"}, "opens SSH to the whole internet"),
    ({"protocol": "http", "endpoint": "ecs.aliyuncs.com"}, "only allowed for a local endpoint"),
    ({"bandwidth_mbps": "0"}, "bandwidth_mbps must be a number"),
    ({"disk_category": "floppy"}, "disk_category must be one of"),
    ({"site": "moon"}, "site must be one of"),
])
def test_bad_settings_name_the_key(settings, words):
    from workbench_alibaba.settings import parse

    with pytest.raises(ConfigError) as err:
        parse(Profile("p", "alibaba", settings=settings))
    assert words in err.value.message


def test_international_site_defaults():
    from workbench_alibaba.clients import endpoint_for
    from workbench_alibaba.settings import parse

    s = parse(Profile("p", "alibaba", settings={"site": "international"}))
    assert s.regions == ("ap-southeast-1",) and s.currency == "USD"
    assert endpoint_for("bss", "ap-southeast-1", s) == "business.ap-southeast-1.aliyuncs.com"
    assert endpoint_for("ecs", "ap-southeast-1", s) == "ecs.ap-southeast-1.aliyuncs.com"
    china = parse(Profile("p", "alibaba"))
    assert china.regions == ("cn-hangzhou",) and china.currency == "CNY"
    assert endpoint_for("sts", "cn-hangzhou", china) == "sts.aliyuncs.com"
