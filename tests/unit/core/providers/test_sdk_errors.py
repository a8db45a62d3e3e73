"""One shape for SDK-error tables, redaction in one place, and the error-mapping block written once."""

from __future__ import annotations

import pytest

from workbench.core.domain.errors import AuthError, CapacityError, PluginError, TransientError, WorkbenchError
from workbench.core.providers import credentials, redaction
from workbench.core.providers.sdk_errors import ErrorRule, ErrorTable, mapped, scrub

TABLE = ErrorTable(
    ErrorRule("auth", AuthError, "rejected while {what} ({code})", hint="grant {action}", codes=("Denied",),
              statuses=(403,)),
    ErrorRule("capacity", CapacityError, "no room for {instance}", prefixes=("Insufficient",)),
    ErrorRule("quota", CapacityError, "quota: {what}", codes=("NotAllowed",), when=lambda t: "quota" in t),
    ErrorRule("busy", TransientError, "busy ({code_or_status})", statuses=(429,), min_status=500),
)


def test_the_first_matching_rule_builds_the_error():
    err = TABLE.find("Denied").build(what="launching", code="Denied", action="ec2:RunInstances")
    assert isinstance(err, AuthError) and err.message == "rejected while launching (Denied)"
    assert err.hint == "grant ec2:RunInstances"
    assert TABLE.find("SomethingElse", 403).name == "auth"  # a status alone matches too
    assert TABLE.find("InsufficientHostCapacity").build(instance="p5").message == "no room for p5"
    assert TABLE.find("NotAllowed", 400, "operation not allowed") is None  # its text test fails
    assert TABLE.find("NotAllowed", 400, "over quota").name == "quota"
    assert TABLE.find("", 503).build(code_or_status=503).message == "busy (503)"
    assert TABLE.find("New", 400) is None and TABLE.find("", 0) is None
    assert TABLE.rule("busy").min_status == 500 and TABLE.codes("auth") == ("Denied",)
    assert ErrorTable(*TABLE.rules, ignore_case=True).find("denied").name == "auth"
    assert ErrorTable(*TABLE.rules).find("denied") is None


def test_missing_fields_read_as_empty_and_secrets_are_scrubbed():
    err = TABLE.rule("auth").build(what="x")
    assert err.message == "rejected while x ()"
    leaky = PluginError("failed with key wJalrXUtnFEMI/K7MDENG", hint="the key wJalrXUtnFEMI/K7MDENG is wrong")
    assert scrub(leaky, ["wJalrXUtnFEMI/K7MDENG", ""]) is leaky
    assert "wJalr" not in leaky.message + leaky.hint + str(leaky.args) and "****" in leaky.message


def test_redaction_lives_in_one_place():
    assert credentials.redact is redaction.redact
    assert redaction.redact("a secret1234 b", ["secret1234", "ab"]) == "a **** b"


def test_mapped_translates_everything_but_workbench_errors():
    seen = []

    def translate(exc: BaseException) -> WorkbenchError:
        seen.append(exc)
        return TransientError(f"translated {type(exc).__name__}")

    with pytest.raises(TransientError, match="translated KeyError") as info:
        with mapped(translate):
            raise KeyError("x")
    assert info.value.__cause__ is None and info.value.__suppress_context__
    with pytest.raises(AuthError):
        with mapped(translate):
            raise AuthError("already ours")
    with pytest.raises(KeyboardInterrupt):
        with mapped(translate):
            raise KeyboardInterrupt
    assert len(seen) == 1
