"""Least privilege: resources/policies/alibaba-ram-policy.json grants exactly the actions the plugin calls.

Three holds: (1) the plugin's action list (``clients.ACTIONS``, which ``Api.call`` enforces before
sending) is exactly the policy; (2) every API action named anywhere in the plugin's source is in that
list; (3) every test in this folder runs on an account granted only the policy (conftest), and fails
if the server refused a call with Forbidden.RAM.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .conftest import POLICY, policy_actions

PLUGIN = Path(__file__).resolve().parents[3] / "plugins" / "workbench_alibaba"


def _sdk_actions() -> set[str]:
    """Every action name the four SDKs know (from their client methods)."""
    import importlib

    names: set[str] = set()
    for pkg in ("alibabacloud_ecs20140526", "alibabacloud_vpc20160428", "alibabacloud_sts20150401",
                "alibabacloud_bssopenapi20171214"):
        models = importlib.import_module(f"{pkg}.models")
        names |= {n[:-len("Request")] for n in dir(models) if n.endswith("Request") and not n.endswith("RequestTag")}
    return names | {"GetCallerIdentity"}


def test_policy_is_ram_json_allow_only():
    doc = json.loads(POLICY.read_text(encoding="utf-8"))
    assert doc["Version"] == "1"
    assert all(s["Effect"] == "Allow" and s["Resource"] == "*" for s in doc["Statement"])


def test_policy_is_exactly_the_plugin_action_list():
    from workbench_alibaba.clients import ACTIONS, RAM_PREFIX

    listed = {f"{RAM_PREFIX[p]}:{a}" for p, actions in ACTIONS.items() for a in actions} - {"sts:GetCallerIdentity"}
    policy = set(policy_actions())
    assert sorted(listed - policy) == [], "called but not allowed"
    assert sorted(policy - listed) == [], "allowed but never called"


def test_every_action_named_in_the_source_is_listed():
    from workbench_alibaba.clients import ACTIONS

    source = "\n".join(p.read_text(encoding="utf-8") for p in sorted(PLUGIN.glob("*.py")))
    # response list paths such as ("TagResources", "TagResource") name answers, not actions
    paths = set(re.findall(r'\("([A-Z][A-Za-z]+)",\s*"[A-Z][A-Za-z]+"\)', source))
    named = (set(re.findall(r'"([A-Z][A-Za-z]+)"', source)) - paths) & _sdk_actions()
    listed = set().union(*ACTIONS.values())
    assert {"RunInstances", "DescribeInstances", "CreateVpc", "DescribeInstanceBill"} <= named
    assert sorted(named - listed) == []


def test_an_action_outside_the_list_is_refused_before_sending(make_provider):
    from workbench.core.domain.errors import PluginError

    p = make_provider()
    with pytest.raises(PluginError) as err:
        p._api.ecs("DeleteImage", "cn-hangzhou", ImageId="m-1")
    assert "not in its list of actions" in err.value.message
