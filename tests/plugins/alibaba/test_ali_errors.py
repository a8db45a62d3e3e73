"""Alibaba Cloud error codes become workbench errors with a message and a hint a person can act on."""

from __future__ import annotations

import pytest

from alibaba_ecs import Account, AlibabaServer
from workbench.core.domain.errors import (AuthError, CapacityError, NotFoundError, PluginError, QuotaError, SpecError,
                                          TransientError)


def _sdk_error(code: str, status: int = 400, message: str = "m", **data):
    from alibabacloud_tea_openapi.exceptions import ClientException, ServerException

    cls = ServerException if status >= 500 else ClientException
    return cls(status_code=status, code=code, message=f"code: {status}, {message}", data={"Message": message, **data})


@pytest.mark.parametrize("code, status, kind, words, hint", [
    ("InvalidAccessKeyId.NotFound", 404, AuthError, "does not know this AccessKey ID", "RAM console"),
    ("SignatureDoesNotMatch", 400, AuthError, "secret does not match", "secret shown"),
    ("InvalidTimeStamp.Expired", 400, AuthError, "request time", "clock"),
    ("Forbidden.RAM", 403, AuthError, "not allowed to call ecs:RunInstances", "alibaba-ram-policy.json"),
    ("OperationDenied.NoStock", 403, CapacityError, "no stock for ecs.gn6v-c8g1.2xlarge", "next zone or region"),
    ("QuotaExceed.ElasticQuota", 403, QuotaError, "quota does not allow ecs.gn6v-c8g1.2xlarge", "Quota Center"),
    ("InsufficientBalance", 400, QuotaError, "balance", "top up"),
    ("Throttling.User", 400, TransientError, "busy", "retry"),
    ("ServiceUnavailable", 503, TransientError, "busy", "retry"),
    ("DependencyViolation.VSwitch", 400, TransientError, "changing", "retry"),
    ("InvalidInstanceId.NotFound", 404, NotFoundError, "does not exist", "already be gone"),
    ("InvalidParameter.Conflict", 400, SpecError, "refused RunInstances", "instance type"),
    ("Forbidden.UserVerification", 403, AuthError, "real-name verification", "real-name"),
    ("SomethingNew", 400, PluginError, "SomethingNew", None),
])
def test_error_table(code, status, kind, words, hint):
    from workbench_alibaba.errors import translate

    err = translate(_sdk_error(code, status), "RunInstances", region="cn-hangzhou", itype="ecs.gn6v-c8g1.2xlarge")
    assert type(err) is kind
    assert words in err.message and code in err.message
    assert (hint in (err.hint or "")) if hint else True


def test_denied_action_is_named_from_the_access_denied_detail():
    from workbench_alibaba.errors import translate

    exc = _sdk_error("Forbidden.RAM", 403)
    exc.access_denied_detail = {"AuthAction": "vpc:CreateVSwitch"}
    assert "vpc:CreateVSwitch" in translate(exc, "CreateVSwitch", product="vpc").message


def test_secrets_never_reach_a_message():
    from workbench_alibaba.errors import translate

    err = translate(_sdk_error("InvalidParameter", 400, "bad value sk-SECRET-123456 in request"), "RunInstances",
                    secrets=["sk-SECRET-123456"])
    assert "sk-SECRET-123456" not in err.message and "***" in err.message


def test_connection_failure_is_transient(make_provider):
    p = make_provider(endpoint="127.0.0.1:9", retry_total="1")  # nothing listens there
    with pytest.raises(TransientError) as err:
        p.check_credentials()
    assert "did not answer" in err.value.message


def test_throttling_is_retried_then_succeeds(ali: AlibabaServer, account: Account, make_provider):
    ali.add_fault("ecs:DescribeRegions", status=400, code="Throttling.User", times=2, account=account.account_id,
                  message="Request was denied due to user flow control.")
    make_provider().check_credentials()
    assert [c.code for c in ali.calls(account, "ecs:DescribeRegions")] == ["Throttling.User", "Throttling.User", None]


def test_persistent_throttling_is_a_transient_error_with_a_hint(ali: AlibabaServer, account: Account, make_provider):
    ali.add_fault("ecs:DescribeRegions", status=400, code="Throttling.User", times=-1, account=account.account_id)
    with pytest.raises(TransientError) as err:
        make_provider(retry_total="2").check_credentials()
    assert "Throttling.User" in err.value.message and err.value.hint == "retry in a minute"
    assert len(ali.calls(account, "ecs:DescribeRegions")) == 3
    ali.clear_faults()
