"""The storage credentials the controller can hand a relaunched attempt, against an STS as strict as AWS.

The test server (tests/support/aws_sts.py) refuses what AWS refuses a role: GetFederationToken with session
credentials, AssumeRole by role chaining for more than an hour.  The plugin running on the controller role's
credentials never sends the first and asks at most an hour for the second (the old code sent both and
failed); with an IAM user's key nothing changes."""

from __future__ import annotations

import boto3
import pytest

from aws_sts import CHAINING_REFUSED, FEDERATION_REFUSED
from workbench.core.domain.errors import AuthError
from workbench.core.domain.storage_uri import parse_storage_uri

from .conftest import KEY_ID, SECRET

ACCOUNT = "123456789012"
JOB_ROLE = f"arn:aws:iam::{ACCOUNT}:role/workbench-job-storage"


def _client(moto, service, creds=None):
    keys = creds or {"aws_access_key_id": KEY_ID, "aws_secret_access_key": SECRET}
    return boto3.client(service, region_name="us-east-1", endpoint_url=moto.url, **keys)


def controller_credentials(moto) -> dict[str, str]:
    """What the controller machine's metadata service hands out: the controller role's session credentials."""
    c = _client(moto, "sts").assume_role(RoleArn=f"arn:aws:iam::{ACCOUNT}:role/workbench-controller",
                                         RoleSessionName="i-0123456789abcdef0")["Credentials"]
    return {"aws_access_key_id": c["AccessKeyId"], "aws_secret_access_key": c["SecretAccessKey"],
            "aws_session_token": c["SessionToken"]}


def as_secrets(creds: dict[str, str]) -> dict[str, str]:
    return {"access_key_id": creds["aws_access_key_id"], "secret_access_key": creds["aws_secret_access_key"],
            "session_token": creds["aws_session_token"]}


def test_the_server_refuses_what_sts_refuses_a_role_and_allows_the_rest(moto):
    from botocore.exceptions import ClientError

    role = controller_credentials(moto)
    sts = _client(moto, "sts", role)
    with pytest.raises(ClientError) as federation:
        sts.get_federation_token(Name="wb-x", DurationSeconds=3600)
    assert federation.value.response["Error"]["Code"] == "AccessDenied"
    assert federation.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert federation.value.response["Error"]["Message"] == FEDERATION_REFUSED
    with pytest.raises(ClientError) as chained:
        sts.assume_role(RoleArn=JOB_ROLE, RoleSessionName="wb-x", DurationSeconds=3601)
    assert chained.value.response["Error"]["Code"] == "ValidationError"
    assert chained.value.response["Error"]["Message"] == CHAINING_REFUSED
    assert sts.assume_role(RoleArn=JOB_ROLE, RoleSessionName="wb-x", DurationSeconds=3600)["Credentials"]
    assert ":assumed-role/workbench-controller/" in sts.get_caller_identity()["Arn"]

    user = _client(moto, "sts")  # an IAM user's long-term key: both allowed, 12 h and 36 h
    assert user.assume_role(RoleArn=JOB_ROLE, RoleSessionName="wb-x", DurationSeconds=12 * 3600)["Credentials"]
    assert user.get_federation_token(Name="wb-x", DurationSeconds=36 * 3600)["Credentials"]

    # an MFA session (GetSessionToken) is a session too, though not a role: no federation, AssumeRole as asked
    mfa = user.get_session_token(DurationSeconds=3600)["Credentials"]
    session = _client(moto, "sts", {"aws_access_key_id": mfa["AccessKeyId"],
                                    "aws_secret_access_key": mfa["SecretAccessKey"],
                                    "aws_session_token": mfa["SessionToken"]})
    with pytest.raises(ClientError, match="session credentials"):
        session.get_federation_token(Name="wb-x", DurationSeconds=3600)
    assert session.assume_role(RoleArn=JOB_ROLE, RoleSessionName="wb-x", DurationSeconds=7200)["Credentials"]

    moto.faults.sts.role_key(mfa["AccessKeyId"])  # declared a role's (an instance profile's, say)
    with pytest.raises(ClientError, match="role chaining"):
        session.assume_role(RoleArn=JOB_ROLE, RoleSessionName="wb-x", DurationSeconds=7200)


def test_on_the_controller_role_without_a_role_to_assume_federation_is_never_asked(moto, make_provider):
    _client(moto, "s3").create_bucket(Bucket="lab")
    uri = parse_storage_uri("s3://lab/runs/r1")
    role = controller_credentials(moto)

    without = make_provider(name="ctrl", secrets=as_secrets(role))
    with pytest.raises(AuthError) as refused:
        without.storage_machine_remote(uri, True, 25 * 3600, "train-a2")
    assert "runs as the role workbench-controller" in refused.value.message
    assert "storage_role_arn" in (refused.value.hint or "") and "workbench-job-storage" in refused.value.hint
    assert moto.faults.find("GetFederationToken") == []  # never asked: AWS refuses a role that


def test_on_the_controller_role_a_job_gets_credentials_of_one_hour_from_the_job_storage_role(moto, make_provider):
    _client(moto, "s3").create_bucket(Bucket="lab")
    uri = parse_storage_uri("s3://lab/runs/r1")
    role = controller_credentials(moto)
    ctrl = make_provider(name="ctrl", secrets=as_secrets(role), storage_role_arn=JOB_ROLE)
    remote = ctrl.storage_machine_remote(uri, True, 25 * 3600, "train-a2")
    (asked,) = moto.faults.find("AssumeRole")[1:]  # the first made the controller's own credentials
    assert asked.param("RoleArn") == JOB_ROLE and asked.param("DurationSeconds") == "3600"
    assert "arn:aws:s3:::lab/runs/r1/*" in asked.param("Policy")
    assert remote.options["access_key_id"] not in (KEY_ID, role["aws_access_key_id"])
    assert remote.options["session_token"] and remote.expires_at is not None
    ctrl.storage_machine_remote(uri, False, 2 * 3600, "train-a3")  # the caller's identity is asked once
    assert len([c for c in moto.faults.find("GetCallerIdentity") if c.access_key == role["aws_access_key_id"]]) == 1


def test_with_a_users_key_nothing_changes(moto, make_provider):
    _client(moto, "s3").create_bucket(Bucket="lab")
    uri = parse_storage_uri("s3://lab/runs/r1")
    make_provider().storage_machine_remote(uri, True, 25 * 3600, "train-a1")
    assert moto.faults.find("GetFederationToken")[0].param("DurationSeconds") == str(25 * 3600)
    make_provider(name="u2", storage_role_arn=JOB_ROLE).storage_machine_remote(uri, True, 25 * 3600, "train-a1")
    assert moto.faults.find("AssumeRole")[0].param("DurationSeconds") == str(12 * 3600)
