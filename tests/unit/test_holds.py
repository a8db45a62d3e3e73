"""The hold rules of both test clouds (tests/support/holds.py): a parked request really waits in the
server, is let go when (and in the order) the test says, then meets the rest of its rule; nothing
stays parked after a reset.  Real boto3 against moto, real HTTPS against the ARM server."""

from __future__ import annotations

import ssl
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

import aws_moto


from azure_arm import ArmRequest, shared_server  # noqa: E402


@pytest.fixture
def moto():
    stack = aws_moto.start()
    stack.reset()
    yield stack
    stack.reset()


def _ec2(stack):
    return boto3.client("ec2", region_name="us-east-1", endpoint_url=stack.url, aws_access_key_id="AKIAHOLDTEST",
                        aws_secret_access_key="hold", config=Config(retries={"max_attempts": 1}))


class Call(threading.Thread):
    """One boto3 call on its own thread; ``outcome`` is its answer or its exception."""

    def __init__(self, fn, **kwargs) -> None:
        super().__init__(daemon=True)
        self.fn, self.kwargs, self.outcome = fn, kwargs, None
        self.start()

    def run(self) -> None:
        try:
            self.outcome = self.fn(**self.kwargs)
        except Exception as exc:  # noqa: BLE001 - handed to the test
            self.outcome = exc


def test_a_held_aws_request_waits_in_the_server_until_released(moto):
    hold = moto.faults.hold("CreateSecurityGroup")
    ec2 = _ec2(moto)
    call = Call(ec2.create_security_group, GroupName="held", Description="held")
    (arrived,) = hold.wait_arrived()
    assert arrived.operation == "CreateSecurityGroup" and arrived.param("GroupName") == "held"
    # parked: moto has not made the group, the client has no answer, other requests go through
    names = [g["GroupName"] for g in ec2.describe_security_groups()["SecurityGroups"]]
    assert "held" not in names and call.is_alive() and hold.held == 1
    hold.release()
    hold.wait_answered()
    call.join(10)
    assert call.outcome["GroupId"].startswith("sg-")
    assert "held" in [g["GroupName"] for g in ec2.describe_security_groups()["SecurityGroups"]]
    assert not hold.timed_out
    # spent: the next one passes untouched
    assert _ec2(moto).create_security_group(GroupName="free", Description="x")["GroupId"]


def test_release_one_lets_the_oldest_go_first_and_the_rest_of_the_rule_applies(moto):
    hold = moto.faults.hold("CreateSecurityGroup", count=2, error="UnauthorizedOperation", status=403)
    ec2 = _ec2(moto)
    first = Call(ec2.create_security_group, GroupName="first", Description="x")
    hold.wait_arrived(1)
    second = Call(ec2.create_security_group, GroupName="second", Description="x")
    a, b = hold.wait_arrived(2)
    assert (a.param("GroupName"), b.param("GroupName")) == ("first", "second")
    hold.release(1)
    first.join(10)
    assert isinstance(first.outcome, ClientError) and first.outcome.response["Error"]["Code"] == "UnauthorizedOperation"
    assert second.is_alive() and hold.held == 1
    hold.release()
    second.join(10)
    assert isinstance(second.outcome, ClientError)
    hold.wait_answered(2)


def test_a_reset_lets_every_parked_request_go_and_a_forgotten_hold_times_out(moto):
    hold = moto.faults.hold("CreateSecurityGroup")
    call = Call(_ec2(moto).create_security_group, GroupName="parked", Description="x")
    hold.wait_arrived()
    moto.faults.clear()  # what the fixture's reset does after a test
    call.join(10)
    assert not call.is_alive() and not isinstance(call.outcome, Exception)
    late = moto.faults.hold("CreateSecurityGroup", timeout_s=0.2)
    assert _ec2(moto).create_security_group(GroupName="late", Description="x")["GroupId"]
    assert late.timed_out  # the test would fail on this: it never released its hold


def test_a_held_arm_request_waits_and_names_its_path():
    arm = shared_server()
    hold = arm.hold(r"^/subscriptions$", method="GET")
    ctx = ssl.create_default_context(cafile=arm.ca_file)
    answers: list[int] = []

    def get() -> None:
        try:
            urllib.request.urlopen(f"{arm.url}/subscriptions?api-version=2022-12-01", context=ctx, timeout=30)
        except urllib.error.HTTPError as exc:
            answers.append(exc.code)

    t = threading.Thread(target=get, daemon=True)
    t.start()
    try:
        (req,) = hold.wait_arrived()
        assert req == ArmRequest("GET", "/subscriptions", None, None)
        assert t.is_alive() and not answers
    finally:
        hold.release()
    hold.wait_answered()
    t.join(10)
    assert answers == [401]  # handled as usual once released: no token, no subscriptions
