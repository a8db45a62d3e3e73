"""The controller's policy documents (resources/policies/aws-controller-*.json, aws-job-storage-*.json and the
app's aws-app-controller-additions.json): valid, no write action on ``"Resource": "*"``, every AWS call the
plugin makes on the controller's path allowed (read from the code, and recorded while a provider running on
the controller role's credentials launches, lists, mints storage credentials and tears down), and each
statement explained in resources/policies/README.md."""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path

import boto3

from workbench.core.domain.storage_uri import parse_storage_uri
from workbench_aws.controller_identity import document

from .conftest import KEY_ID, SECRET, launch_request
from .test_aws_controller_credentials import JOB_ROLE, as_secrets, controller_credentials
from .test_aws_lifecycle import _tag_specs
from .test_aws_policy import PLUGIN, SHARED, called_actions

ROOT = Path(__file__).resolve().parents[3]
POLICIES = ROOT / "resources" / "policies"
DOCUMENTS = ["aws-controller-trust.json", "aws-controller-role-policy.json", "aws-job-storage-trust.json",
             "aws-job-storage-role-policy.json", "aws-app-controller-additions.json"]
PLACEHOLDERS = {"ACCOUNT_ID", "CONTROLLER_ROLE", "JOB_STORAGE_ROLE", "BOARD_PATH"}
#: the plugin's modules a controller runs through: offers for recovery, launch, listing, teardown, storage
CONTROLLER_PATH = ["provider", "offers", "pricing", "quotas", "launch", "cluster", "userdata", "consistency",
                   "inventory", "teardown", "storage"]
#: called by those modules, never by the controller (why, each)
NOT_ON_THE_CONTROLLER = {
    "sts:GetFederationToken": "storage.py refuses it before sending when the caller is a role (AWS refuses it)",
    "s3:ListAllMyBuckets": "the bucket picker of the app's wizard",
    "s3:ListBucketMultipartUploads": "uploading a local folder: the app does it before the launch is handed over",
    "s3:AbortMultipartUpload": "the same upload's clean-up",
}
READ = re.compile(r"^[a-z0-9-]+:(Describe|Get|List)")


def _actions(statement) -> list[str]:
    listed = statement.get("Action", [])
    return [listed] if isinstance(listed, str) else list(listed)


def _resources(statement) -> list[str]:
    listed = statement.get("Resource", [])
    return [listed] if isinstance(listed, str) else list(listed)


def allowed(doc, action: str) -> bool:
    return any(s["Effect"] == "Allow" and any(fnmatch.fnmatchcase(action, a) for a in _actions(s))
               for s in doc["Statement"])


def test_documents_are_iam_json_with_only_known_placeholders():
    for name in DOCUMENTS:
        text = (POLICIES / name).read_text(encoding="utf-8")
        doc = json.loads(text)
        assert doc["Version"] == "2012-10-17" and doc["Statement"], name
        assert all(s.get("Sid") for s in doc["Statement"]), name
        assert set(re.findall(r"\b[A-Z][A-Z_]{5,}\b", text)) <= PLACEHOLDERS, name
    filled = document("aws-controller-role-policy.json", "aws-cn", ACCOUNT_ID="123456789012",
                      JOB_STORAGE_ROLE="workbench-job-storage", BOARD_PATH="lab/workbench-controller")
    assert "arn:aws:" not in json.dumps(filled) and "arn:aws-cn:iam::123456789012:role/workbench-job-storage" in \
        json.dumps(filled)
    assert document("aws-controller-trust.json", "aws-cn")["Statement"][0]["Principal"] == {
        "Service": "ec2.amazonaws.com.cn"}


def test_no_write_action_is_allowed_on_every_resource():
    for name in DOCUMENTS:
        for s in json.loads((POLICIES / name).read_text(encoding="utf-8"))["Statement"]:
            if s["Effect"] != "Allow" or "*" not in _resources(s):
                continue
            writes = [a for a in _actions(s) if not READ.match(a) and a != "pricing:GetProducts"]
            assert writes == [], f"{name} {s['Sid']}: {writes} on every resource"


def test_the_app_passes_only_the_controller_role():
    doc = json.loads((POLICIES / "aws-app-controller-additions.json").read_text(encoding="utf-8"))
    (passing,) = [s for s in doc["Statement"] if "iam:PassRole" in _actions(s)]
    assert _actions(passing) == ["iam:PassRole"]
    assert _resources(passing) == ["arn:aws:iam::*:role/workbench-controller*"]


def test_every_call_of_the_plugins_controller_path_is_allowed_by_the_controller_policy():
    doc = json.loads((POLICIES / "aws-controller-role-policy.json").read_text(encoding="utf-8"))
    called = called_actions([PLUGIN / f"{m}.py" for m in CONTROLLER_PATH] + SHARED)
    assert {"ec2:RunInstances", "ec2:TerminateInstances", "sts:AssumeRole", "pricing:GetProducts"} <= called
    refused = sorted(a for a in called if not allowed(doc, a) and a not in NOT_ON_THE_CONTROLLER)
    assert refused == []
    assert not any(allowed(doc, a) for a in NOT_ON_THE_CONTROLLER if a != "s3:AbortMultipartUpload")
    # the job storage role holds what a machine's sync does, never more than the session policy narrows
    job = json.loads((POLICIES / "aws-job-storage-role-policy.json").read_text(encoding="utf-8"))
    assert {a for s in job["Statement"] if s["Effect"] == "Allow" for a in _actions(s)} == {
        "s3:GetBucketLocation", "s3:ListBucket", "s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"}


def test_a_provider_on_the_controller_role_stays_within_the_controller_policy(moto, make_provider):
    from workbench_aws import clients

    boto3.client("s3", region_name="us-east-1", endpoint_url=moto.url, aws_access_key_id=KEY_ID,
                 aws_secret_access_key=SECRET).create_bucket(Bucket="lab")
    doc = json.loads((POLICIES / "aws-controller-role-policy.json").read_text(encoding="utf-8"))
    ctrl = make_provider(name="ctrl", secrets=as_secrets(controller_credentials(moto)), storage_role_arn=JOB_ROLE,
                         storage_uri="s3://lab")
    seen: set[str] = set()
    clients.add_operation_observer(seen.add)
    try:
        req = launch_request(ctrl, "job-a2b3c4", "g4dn.xlarge", 1, "train", "python train.py")
        (inst,) = ctrl.launch(req)
        ctrl.listing()
        ctrl.ended_instances([inst])
        ctrl.storage_machine_remote(parse_storage_uri("s3://lab/runs/r1"), True, 25 * 3600, "job-a2b3c4")
        ctrl.terminate(ctrl.instances())
    finally:
        clients.remove_operation_observer(seen.add)
    assert {"ec2:RunInstances", "ec2:TerminateInstances", "sts:AssumeRole"} <= seen
    assert sorted(a for a in seen if not allowed(doc, a)) == []
    # RunInstances satisfies the policy's aws:RequestTag/workbench:managed condition on what it creates
    specs = _tag_specs(moto.faults.find("RunInstances")[0])
    assert {k: t.get("workbench:managed") for k, t in specs.items()} == {
        "instance": "true", "volume": "true", "network-interface": "true"}
    for op, kind in (("CreateSecurityGroup", "security-group"), ("ImportKeyPair", "key-pair")):
        assert _tag_specs(moto.faults.find(op)[0])[kind]["workbench:managed"] == "true"


def test_the_readme_explains_every_statement():
    readme = (POLICIES / "README.md").read_text(encoding="utf-8")
    for name in DOCUMENTS:
        assert name in readme
        for s in json.loads((POLICIES / name).read_text(encoding="utf-8"))["Statement"]:
            assert f"`{s['Sid']}`" in readme, f"{name}: {s['Sid']} is not explained"
