"""The controller's identity on Alibaba Cloud (issue 33): the RAM role workbench-controller, its policy, the
controller launch that passes it and carries an AutoReleaseTime, and the documents that say what each may do.

Against the RPC test server (real SDKs, the signature checked), whose RAM endpoint answers CreateRole,
GetRole, CreatePolicy, GetPolicy, AttachPolicyToRole and ListPoliciesForRole with RAM's own error codes,
and whose RunInstances checks ram:PassRole and the role's trust of ecs.aliyuncs.com.
"""

from __future__ import annotations

import calendar
import dataclasses
import json
import re
import time
from pathlib import Path

import pytest

from workbench.core.domain.errors import AuthError, WorkbenchError
from workbench.core.paths import resources_dir
from workbench.core.providers.contract import ROLE_CONTROLLER, TAG_ROLE

from .conftest import offer_of, policy_actions, request_for

POLICIES = resources_dir() / "policies"
PLUGIN = Path(__file__).resolve().parents[3] / "plugins" / "workbench_alibaba"


def _doc(name: str) -> dict:
    return json.loads((POLICIES / name).read_text())


def _actions(doc: dict) -> list[str]:
    return [a for st in doc["Statement"] if st["Effect"] == "Allow"
            for a in (st["Action"] if isinstance(st["Action"], list) else [st["Action"]])]


def _ts(text: str) -> float:
    return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")))


def _controller_request(p, install_id, **spec):
    req = request_for(offer_of(p), install_id, **spec)
    return dataclasses.replace(req, tags={**req.tags, TAG_ROLE: ROLE_CONTROLLER})


def test_documents_are_ram_json_with_no_wildcard_write():
    trust = _doc("alibaba-controller-trust.json")
    assert trust["Version"] == "1"
    assert [st["Principal"] for st in trust["Statement"]] == [{"Service": ["ecs.aliyuncs.com"]}]
    for name in ("alibaba-controller-ram-policy.json", "alibaba-app-controller-additions.json"):
        doc = _doc(name)
        assert doc["Version"] == "1" and all(st["Effect"] == "Allow" for st in doc["Statement"])
        assert not any("*" in a for a in _actions(doc)), name
    policy = _doc("alibaba-controller-ram-policy.json")
    for st in policy["Statement"]:  # every write is conditioned on the install's tag, or names one role
        writes = [a for a in st["Action"] if not a.split(":")[1].startswith(("Describe", "List"))]
        if writes:
            assert st.get("Condition") or st["Resource"] in ("${STORAGE_ROLE_ARN}", "acs:oss:*:*:${BOARD_PATH}/*"), st
    additions = _doc("alibaba-app-controller-additions.json")
    assert all(st["Resource"] != "*" for st in additions["Statement"])
    pass_role = next(st for st in additions["Statement"] if "ram:PassRole" in st["Action"])
    assert pass_role["Resource"] == "acs:ram:*:*:role/workbench-controller"


def test_the_documents_cover_what_the_plugin_calls():
    from workbench_alibaba.clients import ACTIONS, CONTROLLER_ACTIONS, RAM_PREFIX

    additions = set(_actions(_doc("alibaba-app-controller-additions.json")))
    assert {f"ram:{a}" for a in CONTROLLER_ACTIONS["ram"]} | {"ram:PassRole"} == additions
    source = (PLUGIN / "controller.py").read_text()
    assert set(re.findall(r'"((?:Get|Create|Attach|List)[A-Za-z]+)"', source)) <= set(CONTROLLER_ACTIONS["ram"])
    # the controller runs recovery and teardown: the app's own ECS/VPC calls less billing, keys, OSS and RAM
    controller = set(_actions(_doc("alibaba-controller-ram-policy.json")))
    app = {f"{RAM_PREFIX[p]}:{a}" for p, acts in ACTIONS.items() for a in acts}
    assert controller <= app
    assert not any(a.startswith(("ram:", "bssapi:")) for a in controller)
    # OSS only on the board (the controller's records in the profile's bucket), never a job's data
    policy = _doc("alibaba-controller-ram-policy.json")
    oss = [st for st in policy["Statement"] if any(a.startswith("oss:") for a in st["Action"])]
    assert oss and all("${BOARD_" in st["Resource"] for st in oss)


def test_create_makes_role_policy_and_attachment_once(ali, account, make_provider, install_id):
    ali.state.accounts[account.access_key_id] = acct = dataclasses.replace(
        account, actions=(*policy_actions(), *_actions(_doc("alibaba-app-controller-additions.json"))))
    p = make_provider(acct=acct, storage_role_arn=f"acs:ram::{account.account_id}:role/oss-jobs")
    looked = p.controller_identity()
    assert not looked.ready and looked.created == ()
    assert "RAM role workbench-controller (trusted by ecs.aliyuncs.com)" in looked.missing
    made = p.controller_identity(create=True)
    assert made.ready and len(made.created) == 3, made.created
    again = p.controller_identity(create=True)
    assert again.ready and again.created == ()
    assert p.controller_identity().ready and p.controller_identity().details["role_arn"].endswith(
        ":role/workbench-controller")
    with ali.state.lock:
        ram = ali.state.ram[account.account_id]
        policy = json.loads(ram["policies"]["workbench-controller"]["_document"])
    assert ram["attached"]["workbench-controller"] == ["workbench-controller"]
    assert f'"acs:RequestTag/workbench:owner": "{install_id}"' in json.dumps(policy)
    assert {"Effect": "Allow", "Action": ["sts:AssumeRole"],
            "Resource": f"acs:ram::{account.account_id}:role/oss-jobs"} in policy["Statement"]
    assert "${" not in json.dumps(policy)


def test_without_the_additions_the_refusal_names_the_file(ali, account, make_provider):
    p = make_provider()  # only the app's own policy
    looked = p.controller_identity()
    assert not looked.ready and any("alibaba-app-controller-additions.json" in m for m in looked.missing)
    with pytest.raises(AuthError) as err:
        p.controller_identity(create=True)
    assert "alibaba-app-controller-additions.json" in err.value.hint and "ram:PassRole" in err.value.hint
    assert [s.code for s in ali.calls(account, "ram:GetRole")] == ["NoPermission"] * 2


def test_a_controller_launch_passes_its_role_and_gets_a_release_time(ali, account, make_provider, install_id):
    ali.state.accounts[account.access_key_id] = acct = dataclasses.replace(
        account, actions=(*policy_actions(), *_actions(_doc("alibaba-app-controller-additions.json"))))
    p = make_provider(acct=acct)
    with pytest.raises(WorkbenchError, match="InvalidRamRole.NotFound"):
        p.launch(_controller_request(p, install_id))
    p.controller_identity(create=True)
    before = time.time()
    [inst] = p.launch(_controller_request(p, install_id))
    [raw] = [i for i in ali.resources(account)["instances"] if i["InstanceId"] == inst.instance_id]
    assert raw["_ram_role"] == "workbench-controller"
    # the system disk its all-in price counts: the smallest the image allows, ultra disk (cloud_efficiency)
    assert raw["_system_disk"]["Category"] == "cloud_efficiency"  # the size is the spec's (deploy asks for 20 GiB)
    release = _ts(raw["AutoReleaseTime"])
    assert before + 2 * 3600 <= release <= time.time() + 2 * 3600 + 61  # now + 2 h, whole minutes
    later = time.time() + 5 * 3600
    p.extend([inst], later)  # the controller has work: it moves its own end
    [raw] = [i for i in ali.resources(account)["instances"] if i["InstanceId"] == inst.instance_id]
    assert _ts(raw["AutoReleaseTime"]) >= later
    ali.clock(account).advance(later + 3 * 3600 - time.time())  # nobody moved it again: the cloud releases it
    assert {"InstanceId": inst.instance_id, "reason": "AutoRelease"} in [
        {k: r[k] for k in ("InstanceId", "reason")} for r in ali.released(account)]
    normal = p.launch(request_for(offer_of(p), install_id))
    [raw] = [i for i in ali.resources(account)["instances"] if i["InstanceId"] == normal[0].instance_id]
    assert raw["_ram_role"] is None  # other launches: no role, their release time as before
    assert raw["_system_disk"]["Category"] == "cloud_essd" and raw["_system_disk"]["Size"] >= 40


def test_passing_the_role_needs_pass_role(ali, account, make_provider, install_id):
    admin = ali.new_key(account, actions=("*",))
    make_provider(acct=admin).controller_identity(create=True)
    p = make_provider()  # the app's own policy: no ram:PassRole
    with pytest.raises(WorkbenchError, match="PassRoleForbidden"):
        p.launch(_controller_request(p, install_id))


def test_the_policy_names_the_board_in_the_profiles_bucket_only():
    from workbench_alibaba.controller import permission_policy

    doc = json.loads(permission_policy("0123456789ab", None, "oss://runs/team"))
    board = [st for st in doc["Statement"] if any(a.startswith("oss:") for a in st["Action"])]
    assert {r for st in board for r in [st["Resource"]]} == {
        "acs:oss:*:*:runs/team/workbench-controller/0123456789ab/*", "acs:oss:*:*:runs"}
    assert any(st.get("Condition", {}).get("StringLike", {}).get("oss:Prefix") ==
               "team/workbench-controller/0123456789ab*" for st in board)
    bare = json.loads(permission_policy("0123456789ab", None, None))
    assert not any(a.startswith("oss:") for st in bare["Statement"] for a in st["Action"])
