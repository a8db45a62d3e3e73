"""Profile setting readers: flags, bounded numbers, and the ssh_address override."""

from __future__ import annotations

import pytest

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.models import Instance, InstanceState
from workbench.core.providers.profile_settings import apply_ssh_address, flag, number, ssh_address


def test_flags_and_numbers() -> None:
    assert flag("Yes") and flag(" on ") and not flag("") and not flag(None) and not flag("nope")
    assert number("p", "k", "", 5.0, 0, 10) == 5.0 and number("p", "k", "2.5", 5.0, 0, 10) == 2.5
    for bad in ("11", "nan", "inf", "x"):
        with pytest.raises(ConfigError, match="k must be a number from 0 to 10"):
            number("p", "k", bad, 5.0, 0, 10)


def test_ssh_address_forms() -> None:
    assert ssh_address("p", None) is None and ssh_address("p", "public") is None
    assert ssh_address("p", "127.0.0.1:2222") == ("127.0.0.1", 2222, None)
    assert ssh_address("p", "bastion.example") == ("bastion.example", 22, None)
    assert ssh_address("p", "me@10.0.0.5:22") == ("10.0.0.5", 22, "me")
    for bad in ("host:0", "host:70000", "host:port", "a b", ":22", "a@b@c"):
        with pytest.raises(ConfigError, match="ssh_address"):
            ssh_address("p", bad)


def test_override_applies_to_machines_that_are_up_only() -> None:
    up = Instance("aws", "p", "i-1", "l", "us-east-1", "p3.2xlarge", InstanceState.RUNNING, host="203.0.113.9",
                  extra={"ssh_user": "ubuntu"})
    moved = apply_ssh_address(up, ("127.0.0.1", 2222, "root"))
    assert (moved.host, moved.extra["ssh_port"], moved.extra["ssh_user"], moved.extra["public_host"]) == \
        ("127.0.0.1", 2222, "root", "203.0.113.9")
    assert apply_ssh_address(up, ("127.0.0.1", 2222, None)).extra["ssh_user"] == "ubuntu"
    gone = up.with_state(InstanceState.TERMINATED)
    assert apply_ssh_address(gone, ("127.0.0.1", 2222, None)).host == gone.host


def test_keyword_hosts_reach_each_machine_at_its_own_address() -> None:
    from workbench.core.providers.profile_settings import per_machine

    assert ssh_address("p", "me@private:2200") == ("private", 2200, "me")
    assert ssh_address("p", "PUBLIC:2222") == ("public", 2222, None)
    up = Instance("aws", "p", "i-1", "l", "us-east-1", "p4d.24xlarge", InstanceState.RUNNING, host="203.0.113.9",
                  extra={"private_ip": "10.0.0.7"})
    inner = apply_ssh_address(up, ("private", 2200, "me"))
    assert (inner.host, inner.extra["ssh_port"], inner.extra["node_ssh_port"]) == ("10.0.0.7", 2200, 2200)
    outer = apply_ssh_address(up, ("public", 2222, None))
    assert (outer.host, outer.extra["node_ssh_port"]) == ("203.0.113.9", 2222)
    assert "node_ssh_port" not in apply_ssh_address(up, ("127.0.0.1", 2222, None)).extra  # a forward's port
    assert per_machine(None) and per_machine(("private", 22, None)) and not per_machine(("127.0.0.1", 22, None))


def test_choice_region_list_and_ssh_cidr_name_the_key() -> None:
    import re

    from workbench.core.providers.profile_settings import PRICING_MODES, choice, region_list, ssh_cidr

    assert choice("p", "pricing", None, PRICING_MODES) == "auto"
    assert choice("p", "pricing", " LIVE ", PRICING_MODES) == "live"
    with pytest.raises(ConfigError, match="profile 'p': pricing must be one of auto, live, snapshot, not 'cheap'"):
        choice("p", "pricing", "cheap", PRICING_MODES)
    region = re.compile(r"^[a-z]{2}-[a-z]+-\d$")
    assert region_list("p", None, "us-east-1", region, "a region") == ("us-east-1",)
    assert region_list("p", " EU-West-1, us-east-1,eu-west-1 ,", "x", region, "a region") == ("eu-west-1", "us-east-1")
    with pytest.raises(ConfigError, match="'mars' is not a region") as bad:
        region_list("p", "us-east-1,mars", "x", region, "a region", hint="comma separated")
    assert bad.value.hint == "comma separated"
    assert ssh_cidr("p", "  ", False) is None and ssh_cidr("p", "203.0.113.7", False) == "203.0.113.7/32"
    assert ssh_cidr("p", "10.1.2.3/8", False) == "10.0.0.0/8" and ssh_cidr("p", "0.0.0.0/0", True) == "0.0.0.0/0"
    with pytest.raises(ConfigError, match="ssh_cidr 'nope' is not an address or network"):
        ssh_cidr("p", "nope", False)
    for wide in ("0.0.0.0/0", "::/0"):
        with pytest.raises(ConfigError, match="opens SSH to the whole internet") as bad:
            ssh_cidr("p", wide, False)
        assert "allow_ssh_from_anywhere=true" in (bad.value.hint or "")
