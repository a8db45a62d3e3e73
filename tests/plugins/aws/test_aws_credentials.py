"""Credentials: identity from STS, clear reasons for bad keys (never the key), named profiles, MFA sessions."""

from __future__ import annotations

import time

import pytest

from aws_moto import FaultRule
from workbench.core.domain.errors import AuthError, ConfigError
from workbench_aws.provider import AwsProvider
from workbench_aws.clients import MfaCodeNeeded

from .conftest import KEY_ID, SECRET

MFA = "arn:aws:iam::123456789012:mfa/researcher"


def test_check_credentials_names_account_and_principal(moto, make_provider):
    identity = make_provider().check_credentials()
    assert identity.account == "123456789012" and identity.principal.startswith("arn:aws:")
    assert "stored access key" in identity.display
    call = moto.faults.find("GetCallerIdentity")[0]
    assert call.access_key == KEY_ID and call.service == "sts"


@pytest.mark.parametrize("code, cause", [
    ("InvalidClientTokenId", "access key id is not valid"),
    ("SignatureDoesNotMatch", "secret access key does not match"),
    ("ExpiredToken", "session token has expired"),
])
def test_bad_keys_say_why_and_never_show_the_key(moto, make_provider, code, cause):
    bad_key, bad_secret = "AKIABADKEY000000TEST", "bad/secret+value/DO-NOT-SHOW-1234567890"
    moto.faults.add(FaultRule(operation="GetCallerIdentity", error=code, status=403,
                              message=f"The request was rejected for {bad_key}",
                              when=lambda c: c.access_key == bad_key))
    provider = make_provider(secrets={"access_key_id": bad_key, "secret_access_key": bad_secret,
                                      "session_token": "FwoGZXIvYXdzEBYaDTOKEN-DO-NOT-SHOW"})
    with pytest.raises(AuthError) as info:
        provider.check_credentials()
    text = str(info.value) + repr(info.value.to_json())
    assert cause in info.value.message and info.value.hint
    for secret in (bad_key, bad_secret, "TOKEN-DO-NOT-SHOW"):
        assert secret not in text
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_half_a_key_is_refused_before_any_call(moto, make_provider):
    provider = make_provider(secrets={"access_key_id": KEY_ID})
    with pytest.raises(AuthError, match="half of an access key"):
        provider.check_credentials()
    assert moto.faults.calls == []


def test_a_named_profile_from_the_aws_config_is_used(moto, make_provider, tmp_path, monkeypatch):
    config, creds = tmp_path / "config", tmp_path / "credentials"
    config.write_text("[profile research]\nregion = us-east-1\n")
    creds.write_text("[research]\naws_access_key_id = AKIANAMEDPROFILE0001\n"
                     "aws_secret_access_key = named/profile/secret\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(creds))
    identity = make_provider(secrets={"aws_profile": "research"}).check_credentials()
    assert "named profile 'research'" in identity.display
    assert moto.faults.find("GetCallerIdentity")[0].access_key == "AKIANAMEDPROFILE0001"
    with pytest.raises(ConfigError, match="not in the AWS config"):
        make_provider(name="other", secrets={"aws_profile": "nope"}).check_credentials()


def test_mfa_asks_for_a_code_then_uses_temporary_credentials(moto, make_provider):
    provider = make_provider(mfa_serial=MFA)
    with pytest.raises(MfaCodeNeeded) as info:
        provider.check_credentials()
    assert info.value.kind == "mfa_required" and isinstance(info.value, AuthError)
    assert MFA in info.value.hint and moto.faults.calls == []
    with pytest.raises(AuthError, match="six digits"):
        provider.provide_mfa_code("12ab")
    provider.provide_mfa_code("123456")
    provider.check_credentials()
    token_call = moto.faults.find("GetSessionToken")[0]
    assert (token_call.param("SerialNumber"), token_call.param("TokenCode")) == (MFA, "123456")
    assert token_call.access_key == KEY_ID
    later = moto.faults.find("GetCallerIdentity")[0]
    assert later.access_key != KEY_ID  # the temporary key, not the long-term one
    provider.offers("us-east-1")  # further calls reuse the session: no new code needed
    assert len(moto.faults.find("GetSessionToken")) == 1


def test_a_refused_or_expiring_mfa_session_asks_again(moto, make_provider):
    moto.faults.add(FaultRule(operation="GetSessionToken", error="AccessDenied", status=403, times=1,
                              message="MultiFactorAuthentication failed with invalid MFA one time pass code."))
    provider = make_provider(mfa_serial=MFA, secrets={"access_key_id": KEY_ID, "secret_access_key": SECRET,
                                                      "mfa_code": "111111"})
    with pytest.raises(MfaCodeNeeded, match="refused"):
        provider.check_credentials()
    expiring = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 60))
    answer = ("<GetSessionTokenResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><GetSessionTokenResult>"
              "<Credentials><AccessKeyId>ASIATEMPORARY0000001</AccessKeyId><SecretAccessKey>temp/secret</SecretAccessKey>"
              "<SessionToken>temp-token</SessionToken>"
              f"<Expiration>{expiring}</Expiration></Credentials></GetSessionTokenResult>"
              "<ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetSessionTokenResponse>")
    moto.faults.add(FaultRule(operation="GetSessionToken", respond=(200, "text/xml", answer)))
    provider.provide_mfa_code("222222")
    provider.check_credentials()  # the fresh session works …
    assert moto.faults.find("GetCallerIdentity")[-1].access_key == "ASIATEMPORARY0000001"
    with pytest.raises(MfaCodeNeeded, match="expired"):
        provider.check_credentials()  # … but lapses within a minute: a new code before the next call
    assert [c.param("TokenCode") for c in moto.faults.find("GetSessionToken")] == ["111111", "222222"]


def test_the_credential_form_offers_keys_or_a_named_profile():
    fields = {f.key: f for f in AwsProvider.credential_fields}
    assert set(fields) == {"access_key_id", "secret_access_key", "session_token", "aws_profile"}
    assert fields["secret_access_key"].secret and fields["session_token"].secret
    assert not fields["access_key_id"].secret and not fields["aws_profile"].secret
    assert all(f.optional for f in fields.values())


def test_an_sso_profile_without_a_login_says_how_to_sign_in(moto, make_provider, tmp_path, monkeypatch):
    config = tmp_path / "config"
    config.write_text("[profile sso-user]\nsso_session = corp\nsso_account_id = 123456789012\n"
                      "sso_role_name = Researcher\nregion = us-east-1\n\n[sso-session corp]\n"
                      "sso_start_url = https://corp.awsapps.com/start\nsso_region = us-east-1\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("HOME", str(tmp_path))  # no SSO token cache
    with pytest.raises(AuthError) as info:
        make_provider(secrets={"aws_profile": "sso-user"}).check_credentials()
    assert "SSO" in info.value.message and "aws sso login" in info.value.hint
    assert moto.faults.calls == []


def test_every_client_has_a_read_timeout_and_a_slow_answer_is_transient(moto, make_provider):
    from workbench.core.domain.errors import TransientError

    moto.faults.add(FaultRule(operation="GetCallerIdentity", latency_s=1.0))
    provider = make_provider(read_timeout="0.3", max_attempts="2")
    t = time.monotonic()
    with pytest.raises(TransientError, match="did not answer") as info:
        provider.check_credentials()
    assert time.monotonic() - t < 3 and "ReadTimeout" in info.value.message
    assert len(moto.faults.find("GetCallerIdentity")) == 2  # botocore retried once, then gave up
