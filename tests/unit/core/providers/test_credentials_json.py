"""Credentials given as JSON (credentials_json.py) and scrubbing values out of text (redaction.py).

No message, repr, traceback or exception chain may hold a value that was given.
"""

from __future__ import annotations

import json
import traceback
from typing import Any

import pytest

from workbench.core.domain.errors import ConfigError
from workbench.core.providers.contract import CredentialField
from workbench.core.providers.credentials_json import parse_credentials_json
from workbench.core.providers.redaction import leaks_fragment, redact

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SECRET2 = "Zz9-another-Very-Secret-Value-0042"

AWS_FIELDS = (
    CredentialField("access_key_id", "Access key ID"),
    CredentialField("secret_access_key", "Secret access key", secret=True),
    CredentialField("session_token", "Session token", secret=True, optional=True),
)


def _assert_no_secret(err: ConfigError, *secrets: str) -> None:
    text = "\n".join([str(err), repr(err), "".join(traceback.format_exception(err)), err.message,
                      err.hint or "", json.dumps(err.to_json())])
    for secret in secrets:
        assert secret not in text
    # Raised outside the except block: nothing chains back to an exception that might hold the value.
    assert err.__cause__ is None and err.__context__ is None


def test_redact() -> None:
    text = f"error: key {SECRET} rejected; short=abc; also {SECRET2}"
    out = redact(text, [SECRET, SECRET2, "abc", "", None])  # type: ignore[list-item]
    assert SECRET not in out and SECRET2 not in out
    assert "short=abc" in out  # < 4 chars is left alone
    assert out.count("****") == 2
    # A secret containing another is removed whole, not half.
    assert redact("x=abcdEFGH", ["abcd", "abcdEFGH"]) == "x=****"
    assert redact("nothing here", []) == "nothing here"


def test_a_re_encoded_value_still_counts_as_a_leak() -> None:
    assert leaks_fragment(f"quoted as {SECRET!r}".replace("/", "\\/"), [SECRET])  # an 8-character run survives
    assert not leaks_fragment("nothing of it", [SECRET, "abc"])
    assert leaks_fragment("x=abcd", ["abcd"]) and not leaks_fragment("x=abc", ["abc"])  # < 4: never counted


# --------------------------------------------------------------------------
# parse_credentials_json
# --------------------------------------------------------------------------


def test_parse_ok_with_optional_omitted() -> None:
    got = parse_credentials_json(
        json.dumps({"access_key_id": "AKIA", "secret_access_key": SECRET}), AWS_FIELDS
    )
    assert got == {"access_key_id": "AKIA", "secret_access_key": SECRET}


def test_parse_optional_given_and_empty_optional_dropped() -> None:
    fields_json = {"access_key_id": "AKIA", "secret_access_key": SECRET, "session_token": "tok"}
    assert parse_credentials_json(json.dumps(fields_json), AWS_FIELDS)["session_token"] == "tok"
    fields_json["session_token"] = ""
    assert "session_token" not in parse_credentials_json(json.dumps(fields_json), AWS_FIELDS)


def test_parse_numbers_kept_as_written() -> None:
    fields = (CredentialField("account", "Account"), CredentialField("rate", "Rate"))
    got = parse_credentials_json('{"account": 123456789012, "rate": 12.50}', fields)
    assert got == {"account": "123456789012", "rate": "12.50"}


def test_parse_invalid_json_never_echoes_text() -> None:
    text = '{\n  "access_key_id": "AKIA",\n  "secret_access_key": "' + SECRET + '",\n}'
    with pytest.raises(ConfigError) as info:
        parse_credentials_json(text, AWS_FIELDS)
    assert info.value.message == "credentials on stdin are not valid JSON (line 4, column 1)"
    _assert_no_secret(info.value, SECRET, "AKIA")


def test_parse_not_an_object() -> None:
    with pytest.raises(ConfigError, match="must be a JSON object, got an array") as info:
        parse_credentials_json(json.dumps([SECRET]), AWS_FIELDS)
    assert "secret_access_key" in (info.value.hint or "")
    _assert_no_secret(info.value, SECRET)
    with pytest.raises(ConfigError, match="got a string"):
        parse_credentials_json(json.dumps(SECRET), AWS_FIELDS)


def test_parse_missing_required() -> None:
    with pytest.raises(ConfigError) as info:
        parse_credentials_json(json.dumps({"access_key_id": SECRET2}), AWS_FIELDS)
    assert "missing" in info.value.message and "secret_access_key" in info.value.message
    assert "session_token" not in info.value.message  # optional
    _assert_no_secret(info.value, SECRET2)


def test_parse_empty_required_is_missing() -> None:
    with pytest.raises(ConfigError, match="missing required credential key.*secret_access_key"):
        parse_credentials_json(
            json.dumps({"access_key_id": "AKIA", "secret_access_key": "  "}), AWS_FIELDS
        )


def test_parse_unknown_keys() -> None:
    data = {"access_key_id": "AKIA", "secret_acess_key": SECRET, SECRET2 + SECRET: "x"}
    with pytest.raises(ConfigError) as info:
        parse_credentials_json(json.dumps(data), AWS_FIELDS)
    err = info.value
    assert "'secret_acess_key'" in err.message  # the typo is named
    assert "missing required key(s): secret_access_key" in err.message
    assert "access_key_id, secret_access_key, session_token" in (err.hint or "")
    # A long key (maybe a pasted secret) is described, not echoed.
    assert "-character key>" in err.message
    _assert_no_secret(err, SECRET, SECRET2)


@pytest.mark.parametrize("value", [None, True, [SECRET], {"x": SECRET}], ids=["null", "bool", "list", "object"])
def test_parse_non_string_value(value: Any) -> None:
    data = {"access_key_id": "AKIA", "secret_access_key": value}
    with pytest.raises(ConfigError, match="'secret_access_key' must be a string") as info:
        parse_credentials_json(json.dumps(data), AWS_FIELDS)
    _assert_no_secret(info.value, SECRET)
