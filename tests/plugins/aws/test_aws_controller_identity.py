"""The controller's own AWS identity against moto IAM: the role, its inline policy, the instance profile and
the job storage role made once and found again; refusals that name exactly the refused actions; the
controller's launch with its instance profile (asked again while IAM has not propagated it to EC2)."""

from __future__ import annotations

import json

import pytest

from aws_moto import FaultRule
from workbench.core.domain.errors import AuthError, ConfigError
from workbench.core.providers.contract import ROLE_CONTROLLER, TAG_ROLE, SupportsController

from .conftest import launch_request

ACCOUNT = "123456789012"
BOARD = {"storage_uri": "s3://lab/team"}


def iam(moto):
    import boto3

    return boto3.client("iam", region_name="us-east-1", endpoint_url=moto.url, aws_access_key_id="AKIAARRANGE",
                        aws_secret_access_key="arrange")


def test_identity_is_missing_then_made_once_then_found(moto, make_provider):
    provider = make_provider(**BOARD)
    assert isinstance(provider, SupportsController)
    looked = provider.controller_identity()
    assert not looked.ready and looked.created == ()
    assert looked.missing == (
        "role workbench-controller (the account's controller machine)",
        "inline policy workbench-controller of role workbench-controller (absent)",
        "instance profile workbench-controller", "role workbench-controller in instance profile workbench-controller",
        "role workbench-job-storage (job machines' storage credentials, assumed by the controller)",
        "inline policy workbench-job-storage of role workbench-job-storage (absent)")

    made = provider.controller_identity(create=True)
    assert made.ready and made.missing == () and len(made.created) == 6
    assert made.details["instance_profile"] == "workbench-controller"
    assert made.details["job_storage_role_arn"] == f"arn:aws:iam::{ACCOUNT}:role/workbench-job-storage"
    assert made.details["board"] == "s3://lab/team/workbench-controller/"
    assert "resources/policies/aws-app-controller-additions.json" in made.policy_files

    client = iam(moto)
    role = client.get_role(RoleName="workbench-controller")["Role"]
    assert role["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {"Service": "ec2.amazonaws.com"}
    assert {"Key": "workbench:managed", "Value": "true"} in role["Tags"]
    policy = client.get_role_policy(RoleName="workbench-controller", PolicyName="workbench-controller")
    text = json.dumps(policy["PolicyDocument"])
    assert "ACCOUNT_ID" not in text and "BOARD_PATH" not in text and "JOB_STORAGE_ROLE" not in text
    assert f"arn:aws:iam::{ACCOUNT}:role/workbench-job-storage" in text
    assert "arn:aws:s3:::lab/team/workbench-controller/*" in text
    profile = client.get_instance_profile(InstanceProfileName="workbench-controller")["InstanceProfile"]
    assert [r["RoleName"] for r in profile["Roles"]] == ["workbench-controller"]
    trust = client.get_role(RoleName="workbench-job-storage")["Role"]["AssumeRolePolicyDocument"]
    assert trust["Statement"][0]["Condition"] == {
        "ArnEquals": {"aws:PrincipalArn": f"arn:aws:iam::{ACCOUNT}:role/workbench-controller"}}

    again = provider.controller_identity(create=True)  # idempotent: nothing made twice
    assert again.ready and again.created == ()
    assert provider.controller_identity().ready
    assert moto.faults.find("CreateRole") and len(moto.faults.find("CreateRole")) == 2


def test_an_outdated_policy_is_written_again_and_the_role_name_is_a_setting(moto, make_provider):
    provider = make_provider(controller_role="workbench-controller-lab", **BOARD)
    provider.controller_identity(create=True)
    client = iam(moto)
    assert client.get_role(RoleName="workbench-job-storage-lab")
    client.put_role_policy(RoleName="workbench-controller-lab", PolicyName="workbench-controller-lab",
                           PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [
                               {"Effect": "Allow", "Action": "ec2:*", "Resource": "*"}]}))
    looked = provider.controller_identity()
    assert looked.missing == ("inline policy workbench-controller-lab of role workbench-controller-lab (out of date)",)
    assert provider.controller_identity(create=True).created == (
        "inline policy workbench-controller-lab of role workbench-controller-lab",)
    with pytest.raises(ConfigError, match="controller_role"):
        make_provider(controller_role="admin")


def test_refusals_name_exactly_the_refused_actions_and_the_file(moto, make_provider):
    provider = make_provider(**BOARD)
    moto.faults.add(FaultRule(operation=("CreateInstanceProfile", "AddRoleToInstanceProfile"), service="iam",
                              error="AccessDenied", status=403, message="not authorized"))
    moto.faults.add(FaultRule(operation="CreateRole", service="iam", error="AccessDenied", status=403, times=1,
                              message=f"User: arn:aws:iam::{ACCOUNT}:user/lab is not authorized to perform: "
                                      f"iam:TagRole on resource: arn:aws:iam::{ACCOUNT}:role/workbench-controller"))
    with pytest.raises(AuthError) as info:
        provider.controller_identity(create=True)
    message, hint = info.value.message, info.value.hint or ""
    assert message.endswith("AWS refused iam:TagRole, iam:CreateInstanceProfile, iam:AddRoleToInstanceProfile")
    assert "grant iam:TagRole, iam:CreateInstanceProfile, iam:AddRoleToInstanceProfile" in hint
    assert "resources/policies/aws-app-controller-additions.json" in hint
    # everything the profile may do was done: the job storage role exists, the refused steps did not happen
    assert iam(moto).get_role(RoleName="workbench-job-storage")

    moto.faults.clear()
    moto.faults.add(FaultRule(operation="GetRole", service="iam", error="AccessDenied", status=403))
    with pytest.raises(AuthError) as looking:
        provider.controller_identity()
    assert looking.value.message.endswith("may not look up the controller's IAM identity: AWS refused iam:GetRole")


def test_without_a_board_bucket_nothing_is_made(moto, make_provider):
    provider = make_provider()
    assert any("storage_uri" in m for m in provider.controller_identity().missing)
    with pytest.raises(ConfigError, match="storage_uri"):
        provider.controller_identity(create=True)
    assert moto.faults.find("CreateRole") == []


def _profile_of(ec2, instance_id):
    found = ec2().describe_iam_instance_profile_associations(
        Filters=[{"Name": "instance-id", "Values": [instance_id]}])["IamInstanceProfileAssociations"]
    return [a["IamInstanceProfile"]["Arn"] for a in found]


def test_the_controller_launch_runs_as_its_instance_profile_once_iam_has_propagated(moto, make_provider, ec2):
    provider = make_provider(**BOARD)
    provider.controller_identity(create=True)
    # a fresh instance profile: RunInstances may refuse it for seconds (IAM is eventually consistent)
    moto.faults.add(FaultRule(operation="RunInstances", error="InvalidParameterValue", times=2,
                              message="Value (workbench-controller) for parameter iamInstanceProfile.name is "
                                      "invalid. Invalid IAM Instance Profile name"))
    req = launch_request(provider, "ctl-abc123", "g4dn.xlarge", 1, "controller", "workbench controller run")
    req = type(req)(**{**req.__dict__, "tags": {**req.tags, TAG_ROLE: ROLE_CONTROLLER}})
    (inst,) = provider.launch(req)
    runs = moto.faults.find("RunInstances")
    assert len(runs) == 3 and all(r.param("IamInstanceProfile.Name") == "workbench-controller" for r in runs)
    assert _profile_of(ec2, inst.instance_id) == [f"arn:aws:iam::{ACCOUNT}:instance-profile/workbench-controller"]

    job = provider.launch(launch_request(provider, "job-abc123", "g4dn.xlarge", 1, "job", "python train.py"))[0]
    assert moto.faults.find("RunInstances")[-1].param("IamInstanceProfile.Name") is None  # jobs get no role
    assert _profile_of(ec2, job.instance_id) == []
    provider.terminate(provider.instances())


def test_a_job_launch_refused_for_a_bad_parameter_is_not_asked_again(moto, make_provider):
    provider = make_provider()
    moto.faults.add(FaultRule(operation="RunInstances", error="InvalidParameterValue",
                              message="Invalid IAM Instance Profile name"))
    with pytest.raises(Exception):
        provider.launch(launch_request(provider, "job-x1", "g4dn.xlarge", 1, "job", "python train.py"))
    assert len(moto.faults.find("RunInstances")) == 1
