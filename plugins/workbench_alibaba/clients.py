"""Credentials, SDK clients and the one way every API call is made (:meth:`Api.call`).

Credentials, by the profile's ``auth`` setting:

* ``access_key``: the AccessKey id and secret from the keyring (with nothing stored: the environment
  variables ALIBABA_CLOUD_ACCESS_KEY_ID / ALIBABA_CLOUD_ACCESS_KEY_SECRET that Alibaba's own tools read);
* ``ram_role``: those used only to call STS AssumeRole for ``role_arn``; the temporary key
  and token (kept in memory, renewed five minutes before they expire) sign everything else;
* ``cli``: a profile of the Alibaba Cloud CLI (``~/.aliyun/config.json``) in mode AK,
  StsToken or RamRoleArn (the last assumes its role like ``ram_role``);
* ``ecs_ram_role``: on an ECS instance (the controller, issue 33), the temporary key and token of the RAM role
  attached to it, from the metadata service (alibabacloud_credentials' ECS RAM role provider: IMDSv2 token
  first; renewed like an assumed role's).  The SDK has no setting for the service's host, 100.100.100.200: a
  test's loopback one is set through the test-only profile setting ``ecs_metadata_host``.

Every call goes through :meth:`Api.call` (``api.ecs("RunInstances", region, …)``):
the SDK's request model for the action is filled from keyword arguments, sent with the
profile's timeouts, and retried with capped exponential back-off on throttling, 5xx and
connection failures (the SDK itself does not retry); what still fails is translated by
:mod:`.errors`.  The action name is always a literal at the call site: the RAM policy test
reads them from the source.

Threading: the SDK clients keep a requests Session per host and are used from any thread;
this object's caches sit behind a lock.  Secrets never leave this module except to the SDK.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from workbench.core.domain.errors import AuthError, ConfigError, TransientError, WorkbenchError

from .errors import error_code, is_retryable, translate
from .settings import AlibabaSettings

log = logging.getLogger("workbench.alibaba")

ACCESS_KEY_ID, ACCESS_KEY_SECRET, CLI_PROFILE = "access_key_id", "access_key_secret", "cli_profile"
PRODUCTS = {"ecs": ("alibabacloud_ecs20140526", "2014-05-26"), "vpc": ("alibabacloud_vpc20160428", "2016-04-28"),
            "sts": ("alibabacloud_sts20150401", "2015-04-01"),
            "bss": ("alibabacloud_bssopenapi20171214", "2017-12-14"),
            "ram": ("alibabacloud_ram20150501", "2015-05-01")}
RENEW_BEFORE_S = 300.0
ENV_KEY_ID, ENV_KEY_SECRET = "ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET"
#: every API action the plugin calls, by product (RAM prefixes: ecs, vpc, sts, bssapi, oss); a call outside this
#: list is refused before it is sent, and resources/policies/alibaba-ram-policy.json grants exactly these
#: (tests/plugins/alibaba/test_ali_policy.py holds the two together)
ACTIONS: dict[str, frozenset[str]] = {
    "ecs": frozenset({
        "DescribeRegions", "DescribeInstanceTypes", "DescribeAvailableResource", "DescribePrice",
        "DescribeSpotPriceHistory", "DescribeImages", "DescribeInstances", "DescribeKeyPairs",
        "DescribeSecurityGroups", "DescribeDisks", "ListTagResources", "TagResources", "CreateSecurityGroup",
        "AuthorizeSecurityGroup", "ImportKeyPair", "RunInstances", "StopInstances", "ModifyInstanceAutoReleaseTime",
        "DeleteInstances", "DeleteSecurityGroup", "DeleteKeyPairs", "DeleteDisk"}),
    "vpc": frozenset({"DescribeVpcs", "DescribeVSwitches", "DescribeEipAddresses", "ListTagResources", "CreateVpc",
                      "CreateVSwitch", "DeleteVSwitch", "DeleteVpc", "UnassociateEipAddress", "ReleaseEipAddress"}),
    # GetCallerIdentity needs no grant: every identity may ask who it is
    "sts": frozenset({"GetCallerIdentity", "AssumeRole"}),
    "bss": frozenset({"DescribeInstanceBill"}),
    # OSS through its S3-compatible API (boto3, see .storage): RAM actions, checked before each operation
    "oss": frozenset({"ListBuckets", "GetBucketLocation", "ListObjects", "PutObject", "ListMultipartUploads",
                      "AbortMultipartUpload", "GetObject", "DeleteObject"}),
}
#: what only ``controller_identity`` calls (issue 33): the controller's RAM role and policy, which the app's own
#: policy does not grant; resources/policies/alibaba-app-controller-additions.json does (test_ali_controller.py)
CONTROLLER_ACTIONS: dict[str, frozenset[str]] = {
    "ram": frozenset({"GetRole", "CreateRole", "GetPolicy", "CreatePolicy", "AttachPolicyToRole",
                      "ListPoliciesForRole"})}
RAM_PREFIX = {"ecs": "ecs", "vpc": "vpc", "sts": "sts", "bss": "bssapi", "oss": "oss", "ram": "ram"}
_observers: list[Callable[[str, str], None]] = []


def add_call_observer(callback: Callable[[str, str], None]) -> None:
    """``callback(product, action)`` before every call any Alibaba provider sends (tests)."""
    _observers.append(callback)


def remove_call_observer(callback: Callable[[str, str], None]) -> None:
    if callback in _observers:
        _observers.remove(callback)


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


@dataclass(frozen=True)
class Key:
    access_key_id: str
    secret: str
    token: str | None = None
    expires: float | None = None  # POSIX seconds; None: does not expire
    source: str = "AccessKey"


def endpoint_for(product: str, region: str, settings: AlibabaSettings) -> str:
    """The public endpoint of ``product`` in ``region`` (or the profile's ``endpoint`` for all)."""
    if settings.endpoint:
        return settings.endpoint
    if product == "sts":
        return "sts.aliyuncs.com" if settings.site == "china" else "sts.ap-southeast-1.aliyuncs.com"
    if product == "bss":
        return "business.aliyuncs.com" if settings.site == "china" else "business.ap-southeast-1.aliyuncs.com"
    if product == "ram":
        return "ram.aliyuncs.com"  # global, one endpoint for every site
    return f"{product}.{region}.aliyuncs.com"


def read_cli_profile(settings: AlibabaSettings) -> dict[str, Any]:
    """The named (or current) profile of the Alibaba Cloud CLI's config file; ConfigError otherwise."""
    path = settings.cli_config or Path(os.environ.get("ALIBABA_CLOUD_CONFIG_FILE") or
                                       Path.home() / ".aliyun" / "config.json")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"the Alibaba Cloud CLI config {path} does not exist",
                          hint="run `aliyun configure`, or store an AccessKey for this profile") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"the Alibaba Cloud CLI config {path} cannot be read ({type(exc).__name__})") from None
    name = settings.cli_profile or doc.get("current") or "default"
    found = next((p for p in doc.get("profiles") or [] if p.get("name") == name), None)
    if found is None:
        names = ", ".join(sorted(str(p.get("name")) for p in doc.get("profiles") or [])) or "none"
        raise ConfigError(f"the Alibaba Cloud CLI config has no profile {name!r} (it has: {names})",
                          hint="set cli_profile to one of them")
    return found


class Api:
    """SDK clients of one profile and the call wrapper (see the module doc)."""

    def __init__(self, settings: AlibabaSettings, secrets: Mapping[str, str]) -> None:
        self.settings = settings
        self._secrets = dict(secrets)
        self._lock = threading.Lock()
        self._clients: dict[tuple[str, str, str], Any] = {}
        self._key: Key | None = None
        self._modules: dict[str, tuple[Any, Any]] = {}
        self._ecs_role: Any = None  # alibabacloud_credentials' EcsRamRoleCredentialsProvider, built on first use

    # -- secrets -----------------------------------------------------------------------------
    def secret_values(self) -> list[str]:
        """Every secret this object knows (for redaction of messages)."""
        values = [v for k, v in self._secrets.items() if k not in (ACCESS_KEY_ID, "ram_role_name") and v]
        key = self._key
        if key is not None:
            values += [key.secret] + ([key.token] if key.token else [])
        return values

    def _base_key(self) -> Key:
        s = self.settings
        if s.auth == "ecs_ram_role":
            return self._instance_role_key()
        if s.auth == "cli":
            prof = read_cli_profile(s)
            mode = str(prof.get("mode") or "AK")
            ak, secret = prof.get("access_key_id") or "", prof.get("access_key_secret") or ""
            if not ak or not secret:
                raise AuthError(f"the CLI profile {prof.get('name')!r} has no AccessKey (mode {mode})",
                                hint="only the AK, StsToken and RamRoleArn modes of the CLI are supported")
            self._secrets["cli:secret"] = secret
            if mode == "StsToken":
                self._secrets["cli:token"] = prof.get("sts_token") or ""
                return Key(ak, secret, prof.get("sts_token") or None, source=f"CLI profile {prof.get('name')}")
            if mode not in ("AK", "RamRoleArn"):
                raise AuthError(f"the CLI profile {prof.get('name')!r} uses mode {mode}, which this app cannot use",
                                hint="use a profile in AK, StsToken or RamRoleArn mode, or store an AccessKey")
            return Key(ak, secret, source=f"CLI profile {prof.get('name')}")
        ak = (self._secrets.get(ACCESS_KEY_ID) or "").strip()
        secret = self._secrets.get(ACCESS_KEY_SECRET) or ""
        if not ak and not secret and os.environ.get(ENV_KEY_ID) and os.environ.get(ENV_KEY_SECRET):
            # the variables Alibaba Cloud's own tools read (scripts, CI): used only when nothing is stored
            self._secrets[ENV_KEY_SECRET] = os.environ[ENV_KEY_SECRET]
            return Key(os.environ[ENV_KEY_ID].strip(), os.environ[ENV_KEY_SECRET], source="environment variables")
        if not ak or not secret:
            missing = " and ".join(n for n, v in (("AccessKey ID", ak), ("AccessKey secret", secret)) if not v)
            raise AuthError(f"no {missing} stored for profile {s.profile_name!r}",
                            hint="add them in Accounts (RAM console → AccessKey), or set auth=cli to use "
                                 "the Alibaba Cloud CLI's profile")
        return Key(ak, secret)

    def _instance_role_key(self) -> Key:
        """The key of the instance's RAM role, from the metadata service (see the module doc)."""
        s = self.settings
        with self._lock:
            provider = self._ecs_role
        if provider is None:
            try:
                from alibabacloud_credentials.http import HttpOptions
                from alibabacloud_credentials.provider.ecs_ram_role import EcsRamRoleCredentialsProvider
            except ModuleNotFoundError as exc:
                from workbench.core.domain.errors import PluginError

                raise PluginError(f"the Alibaba Cloud SDK is not installed (missing {exc.name})",
                                  hint="install the [alibaba] extra: pip install 'cloud-gpu-workbench[alibaba]'") \
                    from None
            # no background refresh thread: key() renews it five minutes before it expires, as an assumed role's
            provider = EcsRamRoleCredentialsProvider(
                role_name=s.ram_role_name, async_update_enabled=False,
                http_options=HttpOptions(connect_timeout=int(s.connect_timeout * 1000),
                                         read_timeout=int(s.read_timeout * 1000)))
            if s.ecs_metadata_host:  # tests only (settings.py allows loopback only): the SDK hard-codes its host
                setattr(provider, "_EcsRamRoleCredentialsProvider__metadata_service_host", s.ecs_metadata_host)
            with self._lock:
                self._ecs_role = provider
        role = s.ram_role_name or "(the instance's)"
        try:
            cred = provider.get_credentials()
        except Exception as exc:  # noqa: BLE001 - the SDK's CredentialException or a connection error
            raise AuthError(f"the instance's RAM role {role} gave no credentials ({type(exc).__name__})",
                            hint="the controller's instance must run with its RAM role (RunInstances RamRoleName); "
                                 "check it in the ECS console (Instance → RAM role)") from None
        self._secrets["ecs:secret"] = cred.get_access_key_secret()
        self._secrets["ecs:token"] = cred.get_security_token() or ""
        expires = cred.get_expiration()
        return Key(cred.get_access_key_id(), cred.get_access_key_secret(), cred.get_security_token() or None,
                   float(expires) if expires else None, source=f"ECS RAM role {role}")

    def _role_arn(self) -> str | None:
        if self.settings.auth == "ram_role":
            return self.settings.role_arn
        if self.settings.auth == "cli":
            prof = read_cli_profile(self.settings)
            if str(prof.get("mode")) == "RamRoleArn":
                return prof.get("ram_role_arn") or None
        return None

    def key(self) -> Key:
        """The key that signs calls now (assuming the role when one is configured)."""
        with self._lock:
            key = self._key
        if key is not None and (key.expires is None or key.expires - time.time() > RENEW_BEFORE_S):
            return key
        base = self._base_key()
        arn = self._role_arn()
        if arn:
            base = self._assume(base, arn)
        with self._lock:
            self._key = base
            self._clients = {k: v for k, v in self._clients.items() if k[2] == base.access_key_id}
        return base

    def _assume(self, base: Key, arn: str) -> Key:
        sts = self._client("sts", self.settings.regions[0], base)
        body = self._send(sts, "sts", "AssumeRole", self.settings.regions[0],
                          {"RoleArn": arn, "RoleSessionName": self.settings.role_session_name,
                           "DurationSeconds": 3600})
        cred = body.get("Credentials") or {}
        import calendar

        expires = float(calendar.timegm(time.strptime(cred["Expiration"], "%Y-%m-%dT%H:%M:%SZ")))
        return Key(cred["AccessKeyId"], cred["AccessKeySecret"], cred.get("SecurityToken"), expires,
                   source=f"RAM role {arn}")

    def describe_source(self) -> str:
        key = self._key
        return key.source if key is not None else "AccessKey"

    # -- clients -----------------------------------------------------------------------------
    def _module(self, product: str) -> tuple[Any, Any]:
        if product not in self._modules:
            import importlib

            pkg = PRODUCTS[product][0]
            try:
                self._modules[product] = (importlib.import_module(f"{pkg}.client"),
                                          importlib.import_module(f"{pkg}.models"))
            except ModuleNotFoundError as exc:
                from workbench.core.domain.errors import PluginError

                raise PluginError(f"the Alibaba Cloud SDK is not installed (missing {exc.name})",
                                  hint="install the [alibaba] extra: pip install 'cloud-gpu-workbench[alibaba]'") \
                    from None
        return self._modules[product]

    def _client(self, product: str, region: str, key: Key) -> Any:
        with self._lock:
            hit = self._clients.get((product, region, key.access_key_id))
        if hit is not None:
            return hit
        from alibabacloud_tea_openapi.utils_models import Config

        s = self.settings
        endpoint = endpoint_for(product, region, s)
        cfg = Config(access_key_id=key.access_key_id, access_key_secret=key.secret, security_token=key.token,
                     endpoint=endpoint, protocol=s.protocol, region_id=region,
                     connect_timeout=int(s.connect_timeout * 1000), read_timeout=int(s.read_timeout * 1000))
        client = self._module(product)[0].Client(cfg)
        with self._lock:
            self._clients[(product, region, key.access_key_id)] = client
        return client

    # -- calls ---------------------------------------------------------------------------------
    def ecs(self, action: str, region: str, **params: Any) -> Any:
        return self.call("ecs", action, region, params)

    def vpc(self, action: str, region: str, **params: Any) -> Any:
        return self.call("vpc", action, region, params)

    def sts(self, action: str, **params: Any) -> Any:
        return self.call("sts", action, self.settings.regions[0], params)

    def bss(self, action: str, **params: Any) -> Any:
        return self.call("bss", action, self.settings.regions[0], params)

    def ram(self, action: str, **params: Any) -> Any:
        return self.call("ram", action, self.settings.regions[0], params)

    def call(self, product: str, action: str, region: str, params: Mapping[str, Any]) -> Any:
        """The answer's body as the API's JSON (CamelCase dict); workbench errors only (retries transient failures first)."""
        key = self.key()
        return self._send(self._client(product, region, key), product, action, region, params)

    def _send(self, client: Any, product: str, action: str, region: str, params: Mapping[str, Any]) -> Any:
        if action not in ACTIONS.get(product, ()) and action not in CONTROLLER_ACTIONS.get(product, ()):
            from workbench.core.domain.errors import PluginError

            raise PluginError(f"the Alibaba plugin tried {product}:{action}, which is not in its list of actions",
                              hint="add it to clients.ACTIONS and resources/policies/alibaba-ram-policy.json")
        models = self._module(product)[1]
        fields = dict(params)
        if product in ("ecs", "vpc") and "RegionId" not in fields and action != "DescribeInstanceTypes":
            fields["RegionId"] = region
        request_cls = getattr(models, f"{action}Request", None)  # actions without parameters have none
        request = request_cls().from_map(fields) if request_cls is not None else None
        method = getattr(client, _snake(action))
        attempt = 0
        while True:
            for watch in list(_observers):
                watch(product, action)
            try:
                body = (method(request) if request is not None else method()).body
                return body.to_map() if body is not None else {}
            except Exception as exc:  # noqa: BLE001 - translated below
                if attempt < self.settings.retry_total and is_retryable(exc):
                    attempt += 1
                    delay = min(self.settings.retry_backoff_s * (2 ** (attempt - 1)), 20.0)
                    log.info("%s:%s in %s answered %s; retry %d in %.2f s", product, action, region,
                             error_code(exc) or type(exc).__name__, attempt, delay)
                    time.sleep(delay)
                    continue
                raise translate(exc, action, product=product, region=region,
                                secrets=self.secret_values()) from None


def first_error(errors: list[WorkbenchError]) -> WorkbenchError:
    if len(errors) == 1:
        return errors[0]
    return type(errors[0])("; ".join(e.message for e in errors), errors[0].hint) \
        if all(type(e) is type(errors[0]) for e in errors) else TransientError("; ".join(e.message for e in errors))
