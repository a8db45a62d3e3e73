"""Least privilege: the shipped IAM policy lists exactly the AWS actions the plugin calls.

Two checks: every AWS operation any test in this folder sends is in the policy (conftest's
autouse hook records them through botocore ``before-call`` events), and the policy lists
nothing the plugin's code never calls (a scan of the plugin, and of the core S3 module it hands its
clients to, for client method names, mapped to operations with botocore's own service models).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .conftest import POLICY, policy_actions

ROOT = Path(__file__).resolve().parents[3]
PLUGIN = ROOT / "plugins" / "workbench_aws"
#: core code the plugin hands its own clients to (the S3 calls AWS and OSS share): its calls are the plugin's
SHARED = [ROOT / "workbench" / "core" / "storage" / "s3_api.py", ROOT / "workbench" / "core" / "storage" / "s3_store.py"]
SERVICES = {"ec2": "ec2", "sts": "sts", "pricing": "pricing", "service-quotas": "servicequotas", "ssm": "ssm",
            "cloudwatch": "cloudwatch", "ce": "ce", "s3": "s3", "iam": "iam"}
#: needed for the TagSpecifications of RunInstances / CreateSecurityGroup / ImportKeyPair, never called alone;
#: s3:PutObject is what boto3's transfer manager sends for an upload (never named in the plugin's code), and
#: with s3:GetObject what the machines' session credentials may do: GetFederationToken gives them the
#: intersection of the profile's policy and the mount's, so the profile must hold what the machine needs
IMPLIED = {"ec2:CreateTags", "s3:PutObject", "s3:GetObject",
           # the controller's identity (aws-app-controller-additions.json): CreateRole / CreateInstanceProfile with
           # tags need the Tag* actions, AddRoleToInstanceProfile and RunInstances with the profile iam:PassRole
           "iam:TagRole", "iam:TagInstanceProfile", "iam:PassRole",
           # the app's clean-up of the controller's board (core's board, through the store's delete_object)
           "s3:DeleteObject"}


#: names in the plugin that look like SDK methods but are its own (``cluster.list_groups``: placement groups)
NOT_CALLS = {"iam:ListGroups"}


def called_actions(paths: list[Path] | None = None) -> set[str]:
    """The AWS actions the code of ``paths`` (default: the whole plugin and the core S3 modules) calls."""
    import botocore.session
    from botocore import xform_name

    session = botocore.session.get_session()
    by_method: dict[str, set[str]] = {}
    from workbench_aws.errors import iam_action

    for service, prefix in SERVICES.items():
        model = session.get_service_model(service)
        for op in model.operation_names:
            by_method.setdefault(xform_name(op), set()).add(iam_action(prefix, op))
    paths = paths if paths is not None else sorted(PLUGIN.glob("*.py")) + SHARED
    source = "\n".join(p.read_text(encoding="utf-8") for p in paths)
    # client.run_instances(...), a bound method handed on (ec2.describe_vpcs), or a paginator's name
    names = set(re.findall(r"\.([a-z][a-z0-9_]+)\b", source)) | set(re.findall(r'get_paginator\("([a-z_0-9]+)"\)',
                                                                           source))
    found: set[str] = set()
    for name in names & set(by_method):
        found |= by_method[name]
    return found - NOT_CALLS


def test_policy_is_valid_iam_json_with_conditions_on_mutations():
    doc = json.loads(POLICY.read_text(encoding="utf-8"))
    assert doc["Version"] == "2012-10-17"
    by_sid = {s["Sid"]: s for s in doc["Statement"]}
    mutations = by_sid["WorkbenchChangeOnlyItsOwnResources"]
    assert "ec2:TerminateInstances" in mutations["Action"]
    assert mutations["Condition"] == {"StringEquals": {"aws:ResourceTag/workbench:managed": "true"}}
    assert all(s["Effect"] == "Allow" for s in doc["Statement"])


def test_policy_lists_exactly_what_the_plugin_calls():
    called = called_actions()
    assert {"ec2:RunInstances", "ec2:DescribeInstances", "pricing:GetProducts", "sts:GetSessionToken",
            "ce:GetCostAndUsage", "cloudwatch:GetMetricStatistics"} <= called
    policy = policy_actions()
    assert sorted(called - policy) == [], "called but not allowed"
    assert sorted(policy - called - IMPLIED) == [], "allowed but never called"
