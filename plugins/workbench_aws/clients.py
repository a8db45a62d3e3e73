"""boto3 sessions and clients: one Session per thread, retries and timeouts on every client, MFA.

Credentials come from the profile's keyring entry: an access key id + secret
access key (+ optional session token), or the name of a profile in the
standard AWS config (SSO users), or — neither given — botocore's default chain.
With an MFA device (``mfa_serial`` setting) every call uses temporary STS
session credentials: :meth:`Clients.provide_mfa_code` (or a ``mfa_code`` entry in
the secrets mapping) supplies the code; the temporary credentials live in this
object's memory only, and when they are about to expire the next call raises
:class:`MfaCodeNeeded` until a new code is given.

Threading: boto3 Sessions are not thread-safe, so each thread gets its own
(thread-local) Session and its own clients, per set of credentials (providers
of the same profile share them; new credentials get a new Session).  Clients are made with botocore's *standard* retry mode (throttling and
5xx retried with backoff) and connect/read timeouts.  Everything here is safe
to call from any thread.

Tests may watch every AWS operation the plugin sends with
:func:`add_operation_observer` (botocore ``before-call`` event hooks).
"""

from __future__ import annotations

import datetime
import hashlib
import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from workbench.core.domain.errors import AuthError

from .errors import iam_action, translate
from .settings import AwsSettings

log = logging.getLogger("workbench.aws.session")

#: the keys of the credential form (see ``AwsProvider.credential_fields``)
ACCESS_KEY, SECRET_KEY, SESSION_TOKEN, NAMED_PROFILE, MFA_CODE = (
    "access_key_id", "secret_access_key", "session_token", "aws_profile", "mfa_code")
MFA_RENEW_BEFORE_S = 300.0
MFA_DURATION_S = 12 * 3600

_SESSIONS_PER_THREAD = 8
#: per thread: credentials digest → that thread's Session and its clients
_threads = threading.local()
_observers: list[Callable[[str], None]] = []
_observers_lock = threading.Lock()


def add_operation_observer(callback: Callable[[str], None]) -> None:
    """Call ``callback("ec2:RunInstances")`` before every AWS operation any AWS provider sends (tests)."""
    with _observers_lock:
        _observers.append(callback)


def remove_operation_observer(callback: Callable[[str], None]) -> None:
    with _observers_lock:
        if callback in _observers:
            _observers.remove(callback)


def _notify(model: Any = None, **_: Any) -> None:
    if model is None or not _observers:
        return
    action = iam_action(model.service_model.signing_name, model.name)
    with _observers_lock:
        watchers = list(_observers)
    for watch in watchers:
        watch(action)


def _cap_backoff(client: Any, cap_s: float, max_attempts: int) -> None:
    """Swap the client's standard-mode retry handler for the same one with backoff capped at ``cap_s``.

    Everything else is botocore's own standard retry (retryable-error checks, the retry
    quota, throttling detection); only ``ExponentialBackoff``'s ``max_backoff`` changes.
    For test machines and benchmarks, where real 1-20 s backoffs would only add waiting.
    """
    from botocore.retries import quota, standard

    name = client.meta.service_model.service_id.hyphenize()
    client.meta.events.unregister(f"needs-retry.{name}", unique_id=f"retry-config-{name}")
    adapter = standard.RetryEventAdapter()
    detector = standard.ThrottlingErrorDetector(adapter)
    retry_quota = standard.RetryQuotaChecker(quota.RetryQuota(), detector)
    handler = standard.RetryHandler(
        retry_policy=standard.RetryPolicy(
            retry_checker=standard.StandardRetryConditions(max_attempts=max_attempts),
            retry_backoff=standard.ExponentialBackoff(max_backoff=cap_s, service_name=name,
                                                      throttling_detector=detector)),
        retry_event_adapter=adapter, retry_quota=retry_quota, service_name=name)
    client.meta.events.register(f"after-call.{name}", retry_quota.release_retry_quota)
    client.meta.events.register(f"needs-retry.{name}", handler.needs_retry, unique_id=f"retry-config-{name}")


class MfaCodeNeeded(AuthError):
    """The profile uses MFA and needs a (new) code: ask the user, then call ``provide_mfa_code``."""

    kind = "mfa_required"


@dataclass
class _ThreadSession:
    session: Any
    clients: dict[tuple[str, str], Any]


@dataclass(frozen=True)
class _TempCredentials:
    access_key: str
    secret_key: str
    token: str
    expires_at: float  # POSIX seconds


class Clients:
    """Makes boto3 clients for one AWS profile (see the module doc for threading and MFA)."""

    def __init__(self, settings: AwsSettings, secrets: Mapping[str, str]) -> None:
        self.settings = settings
        self._access_key = (secrets.get(ACCESS_KEY) or "").strip() or None
        self._secret_key = secrets.get(SECRET_KEY) or None
        self._token = secrets.get(SESSION_TOKEN) or None
        self._named = (secrets.get(NAMED_PROFILE) or "").strip() or None
        self._mfa_code: str | None = (secrets.get(MFA_CODE) or "").strip() or None
        self._temp: _TempCredentials | None = None
        self._lock = threading.Lock()

    # -- secrets ------------------------------------------------------------------
    def secret_values(self) -> list[str]:
        """Values no message may contain (redacted from every error by :mod:`.errors`)."""
        temp = self._temp
        values = [self._secret_key, self._token, self._mfa_code]
        if temp is not None:
            values += [temp.secret_key, temp.token]
        return [v for v in values if v]

    def describe_source(self) -> str:
        if self._named:
            return f"named profile {self._named!r}"
        if self._access_key:
            return "stored access key"
        return "the default AWS credential chain"

    # -- MFA ------------------------------------------------------------------------
    @property
    def uses_mfa(self) -> bool:
        return bool(self.settings.mfa_serial)

    def provide_mfa_code(self, code: str) -> None:
        """Keep ``code`` (six digits from the device) in memory for the next STS get_session_token call."""
        code = (code or "").strip()
        if not code.isdigit() or len(code) != 6:
            raise AuthError("an MFA code is six digits", hint="type the code your MFA device shows now")
        with self._lock:
            self._mfa_code = code

    def mfa_expires_at(self) -> float | None:
        temp = self._temp
        return temp.expires_at if temp else None

    def _temporary(self) -> _TempCredentials:
        """Valid STS session credentials, fetched with the pending MFA code when needed (under the lock)."""
        now = datetime.datetime.now(datetime.timezone.utc).timestamp()
        temp = self._temp
        if temp is not None and temp.expires_at - now > MFA_RENEW_BEFORE_S:
            return temp
        if not self._mfa_code:
            expired = temp is not None
            raise MfaCodeNeeded(
                f"profile {self.settings.profile_name!r} uses MFA: "
                + ("its session has expired, a new code is needed" if expired else "an MFA code is needed"),
                hint="enter the six-digit code of the MFA device " + str(self.settings.mfa_serial))
        code, self._mfa_code = self._mfa_code, None  # a code works once
        base = self._base_session()
        sts = base.client("sts", region_name=self.settings.regions[0], endpoint_url=self.settings.endpoint("sts"),
                          config=self._config())
        try:
            answer = sts.get_session_token(SerialNumber=self.settings.mfa_serial, TokenCode=code,
                                           DurationSeconds=MFA_DURATION_S)
        except Exception as exc:  # noqa: BLE001 - mapped below
            from .codes import error_code

            if error_code(exc) in ("AccessDenied", "AccessDeniedException"):
                raise MfaCodeNeeded(f"AWS refused the MFA code for profile {self.settings.profile_name!r}",
                                    hint="enter the code shown now (each code works once, for about 30 s)") from None
            raise translate(exc, "getting an MFA session", service="sts", operation="GetSessionToken",
                            secrets=self.secret_values() + [code]) from None
        c = answer["Credentials"]
        expires = c["Expiration"]
        expires_at = expires.timestamp() if hasattr(expires, "timestamp") else now + MFA_DURATION_S
        self._temp = _TempCredentials(c["AccessKeyId"], c["SecretAccessKey"], c["SessionToken"], expires_at)
        log.info("MFA session for profile %s valid until %s", self.settings.profile_name,
                 datetime.datetime.fromtimestamp(expires_at, datetime.timezone.utc).isoformat(timespec="minutes"))
        return self._temp

    # -- sessions and clients ---------------------------------------------------------
    def _config(self) -> Any:
        from botocore.config import Config

        s = self.settings
        return Config(retries={"mode": "standard", "max_attempts": s.max_attempts},
                      connect_timeout=s.connect_timeout, read_timeout=s.read_timeout,
                      user_agent_extra="cloud-gpu-workbench", max_pool_connections=16)

    def _base_session(self) -> Any:
        import boto3

        if self._access_key or self._secret_key:
            if not (self._access_key and self._secret_key):
                raise AuthError(f"profile {self.settings.profile_name!r} has only half of an access key",
                                hint="store both the access key id and the secret access key")
            return boto3.Session(aws_access_key_id=self._access_key, aws_secret_access_key=self._secret_key,
                                 aws_session_token=self._token)
        if self._named:
            return boto3.Session(profile_name=self._named)
        return boto3.Session()

    def _identity_key(self, temp: _TempCredentials | None) -> str:
        """A digest naming these credentials and client settings (never the values themselves)."""
        st = self.settings
        parts = [self._access_key, self._secret_key, self._token, self._named,
                 *((temp.access_key, temp.secret_key, temp.token) if temp else ()),
                 st.endpoint_url, sorted(st.service_endpoints.items()), st.max_attempts, st.connect_timeout,
                 st.read_timeout, st.retry_backoff_cap_s]
        return hashlib.sha256(repr(parts).encode()).hexdigest()

    def _thread_entry(self) -> _ThreadSession:
        """This thread's Session for these credentials (made on first use, shared by providers of them)."""
        with self._lock:
            temp = self._temporary() if self.uses_mfa else None
        key = self._identity_key(temp)
        cache: dict[str, _ThreadSession] = getattr(_threads, "sessions", None) or {}
        _threads.sessions = cache
        entry = cache.get(key)
        if entry is not None:
            return entry
        try:
            if temp is not None:
                import boto3

                made = boto3.Session(aws_access_key_id=temp.access_key, aws_secret_access_key=temp.secret_key,
                                     aws_session_token=temp.token)
            else:
                made = self._base_session()
        except AuthError:
            raise
        except Exception as exc:  # noqa: BLE001 - e.g. ProfileNotFound
            raise translate(exc, "reading the AWS credentials", secrets=self.secret_values()) from None
        while len(cache) >= _SESSIONS_PER_THREAD:
            cache.pop(next(iter(cache)))
        entry = cache[key] = _ThreadSession(made, {})
        return entry

    def session(self) -> Any:
        """This thread's boto3 Session (made on first use, remade when the credentials changed)."""
        return self._thread_entry().session

    def client(self, service: str, region: str) -> Any:
        """A client of ``service`` in ``region`` for this thread (cached), with retries and timeouts."""
        entry = self._thread_entry()
        key = (service, region)
        made = entry.clients.get(key)
        if made is None:
            try:
                made = entry.session.client(service, region_name=region,
                                            endpoint_url=self.settings.endpoint(service), config=self._config())
            except Exception as exc:  # noqa: BLE001
                raise translate(exc, f"preparing the {service} client", region=region,
                                secrets=self.secret_values()) from None
            made.meta.events.register("before-call", _notify)
            if self.settings.retry_backoff_cap_s is not None:
                _cap_backoff(made, self.settings.retry_backoff_cap_s, self.settings.max_attempts)
            entry.clients[key] = made
        return made
