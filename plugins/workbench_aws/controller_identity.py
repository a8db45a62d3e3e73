"""The controller machine's own AWS identity: its IAM role and instance profile, and the job storage role.

The account's controller (issue 33) never holds the user's keys.  It runs as the role
``workbench-controller`` (profile setting ``controller_role``) through the instance profile of the same
name, whose inline policy (``resources/policies/aws-controller-role-policy.json``) allows only what
recovery, the machines' storage credentials and teardown need, on resources tagged by the app where AWS
allows such a condition.  A role may not call ``GetFederationToken`` (AWS wants an IAM user's long-term
key), so a job machine's bucket-scoped credentials come from ``AssumeRole`` of a second role,
``workbench-job-storage`` (same suffix as the controller's), which only the controller role may assume
(``aws-job-storage-trust.json``) and which may reach buckets but never the controller's board
(``aws-job-storage-role-policy.json``); each session is narrowed to the mount's bucket and prefix by the
session policy :mod:`.storage` builds.  One role assuming another is role chaining: those sessions last
one hour at most.

:meth:`ControllerIdentities.identity` looks (``create=False``: what is absent goes to ``missing``) or
makes what is absent (``create=True``), idempotently: a role, policy or profile already there is kept,
a policy that differs from the shipped one is written again.  Every step is tried even after a refusal
(IAM checks the permission before whether the thing exists), so an AccessDenied AuthError names exactly
the refused actions and the file to hand an administrator (``aws-app-controller-additions.json``).

The documents carry placeholders the app fills in: ``ACCOUNT_ID``, ``CONTROLLER_ROLE``,
``JOB_STORAGE_ROLE``, ``BOARD_PATH`` (``BUCKET[/PREFIX]/workbench-controller`` of the profile's
``storage_uri``: the board of :mod:`workbench.core.controller.board` lives there), and the partition in
every ``arn:aws:``.

Threading: blocks on IAM and STS; any worker thread.  Failure rules: AuthError for refusals (above),
ConfigError without a board bucket when something is to be made, other AWS errors translated.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable

from workbench.core import paths
from workbench.core.domain.errors import AuthError, ConfigError
from workbench.core.domain.storage_uri import parse_storage_uri
from workbench.core.providers.contract import ControllerIdentity, ROLE_CONTROLLER, TAG_MANAGED, TAG_ROLE

from .clients import Clients
from .codes import aws_message, error_code
from .consistency import settled
from .errors import translate
from .settings import AwsSettings

BOARD_PREFIX = "workbench-controller"  # workbench.core.controller.board.PREFIX (a plugin imports no core module)
ADDITIONS = "aws-app-controller-additions.json"
CONTROLLER_TRUST = "aws-controller-trust.json"
CONTROLLER_POLICY = "aws-controller-role-policy.json"
JOB_TRUST = "aws-job-storage-trust.json"
JOB_POLICY = "aws-job-storage-role-policy.json"
POLICY_FILES = tuple(f"resources/policies/{n}" for n in (CONTROLLER_TRUST, CONTROLLER_POLICY, JOB_TRUST, JOB_POLICY,
                                                          ADDITIONS))
_DENIED = ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation")
_NAMED_ACTION = re.compile(r"perform: ([a-z0-9-]+:[A-Za-z0-9]+)")
_TAGS = [{"Key": TAG_MANAGED, "Value": "true"}, {"Key": TAG_ROLE, "Value": ROLE_CONTROLLER}]


def board_path(settings: dict[str, str]) -> str | None:
    """``BUCKET[/PREFIX]/workbench-controller`` of the profile's ``s3://`` ``storage_uri``: the controller's board."""
    text = (settings.get("storage_uri") or "").strip()
    if not text:
        return None
    try:
        uri = parse_storage_uri(text)
    except ValueError:
        return None
    if uri.kind != "s3":
        return None
    return "/".join(p for p in (uri.bucket, uri.prefix, BOARD_PREFIX) if p)


def document(name: str, partition: str = "aws", **values: str) -> dict[str, Any]:
    """A shipped policy document with its placeholders filled in (``ACCOUNT_ID="1234…"`` …)."""
    text = (paths.resources_dir() / "policies" / name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace(key, value)
    if partition != "aws":
        text = text.replace("arn:aws:", f"arn:{partition}:")
        if partition == "aws-cn":
            text = text.replace('"ec2.amazonaws.com"', '"ec2.amazonaws.com.cn"')
    return json.loads(text)


def _as_dict(doc: Any) -> Any:
    """IAM hands policy documents back URL-encoded (botocore usually decodes them already)."""
    if isinstance(doc, str):
        try:
            return json.loads(urllib.parse.unquote(doc))
        except ValueError:
            return doc
    return doc


@dataclass
class _Run:
    """What one ``identity`` call found, made and was refused."""

    create: bool
    created: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)

    def deny(self, exc: BaseException, action: str) -> None:
        named = _NAMED_ACTION.search(aws_message(exc))
        found = named.group(1) if named else action
        if found not in self.denied:
            self.denied.append(found)


class ControllerIdentities:
    """The controller's role, instance profile and job storage role for one AWS profile (see the module doc)."""

    def __init__(self, clients: Clients, settings: AwsSettings, profile_settings: dict[str, str]) -> None:
        self.clients = clients
        self.settings = settings
        self.board = board_path(profile_settings)

    def _iam(self) -> Any:
        return self.clients.client("iam", self.settings.regions[0])

    def _ask(self, run: _Run, action: str, call: Callable[[], Any], absent: Any = None) -> Any:
        """``call()``; NoSuchEntity → ``absent``; a refusal is noted (→ ``absent``); other errors leave translated."""
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - mapped
            code = error_code(exc)
            if code in _DENIED:
                run.deny(exc, action)
                return absent
            if code in ("NoSuchEntity", "EntityAlreadyExists"):
                return absent if code == "NoSuchEntity" else True
            raise translate(exc, "setting up the controller's IAM role", service="iam",
                            operation=action.split(":", 1)[1], secrets=self.clients.secret_values()) from None

    def _who(self) -> tuple[str, str]:
        sts = self.clients.client("sts", self.settings.regions[0])
        try:
            arn = sts.get_caller_identity()["Arn"]
        except Exception as exc:  # noqa: BLE001 - mapped
            raise translate(exc, "checking the credentials", service="sts", operation="GetCallerIdentity",
                            secrets=self.clients.secret_values()) from None
        parts = arn.split(":")
        return parts[4], parts[1]

    # -- the steps ---------------------------------------------------------------------------------
    def _role(self, run: _Run, name: str, trust: dict[str, Any], what: str) -> bool:
        iam = self._iam()
        found = self._ask(run, "iam:GetRole", lambda: iam.get_role(RoleName=name), absent=None)
        if found is not None:
            return True
        if "iam:GetRole" not in run.denied:
            run.missing.append(f"role {name} ({what})")
        if not run.create:
            return False
        made = self._ask(run, "iam:CreateRole", lambda: iam.create_role(
            RoleName=name, AssumeRolePolicyDocument=json.dumps(trust), MaxSessionDuration=3600, Tags=_TAGS,
            Description=f"cloud-gpu-workbench: {what}"), absent=None)
        if made is not None and made is not True:
            run.created.append(f"role {name}")
        return made is not None

    def _policy(self, run: _Run, role: str, doc: dict[str, Any]) -> None:
        iam = self._iam()
        found = self._ask(run, "iam:GetRolePolicy", lambda: iam.get_role_policy(RoleName=role, PolicyName=role))
        if found is not None and _as_dict(found.get("PolicyDocument")) == doc:
            return
        if "iam:GetRolePolicy" not in run.denied:
            run.missing.append(f"inline policy {role} of role {role} ({'out of date' if found else 'absent'})")
        if run.create:
            done = self._ask(run, "iam:PutRolePolicy", lambda: iam.put_role_policy(
                RoleName=role, PolicyName=role, PolicyDocument=json.dumps(doc)))
            if done is not None:
                run.created.append(f"inline policy {role} of role {role}")

    def _instance_profile(self, run: _Run, name: str, new_role: bool) -> None:
        iam = self._iam()
        found = self._ask(run, "iam:GetInstanceProfile", lambda: iam.get_instance_profile(InstanceProfileName=name))
        roles = {r.get("RoleName") for r in ((found or {}).get("InstanceProfile") or {}).get("Roles") or []}
        if "iam:GetInstanceProfile" not in run.denied:
            if found is None:
                run.missing.append(f"instance profile {name}")
            if name not in roles:
                run.missing.append(f"role {name} in instance profile {name}")
        if not run.create or name in roles:
            return
        if found is None:
            made = self._ask(run, "iam:CreateInstanceProfile", lambda: iam.create_instance_profile(
                InstanceProfileName=name, Tags=_TAGS))
            if made is not None and made is not True:
                run.created.append(f"instance profile {name}")
        # a role made moments ago may not be visible to IAM's other calls yet (NoSuchEntity)
        added = self._ask(run, "iam:AddRoleToInstanceProfile", lambda: settled(
            lambda: iam.add_role_to_instance_profile(InstanceProfileName=name, RoleName=name),
            ("NoSuchEntity",) if new_role else (), self.settings.poll_s, timeout_s=60.0))
        if added is not None:
            run.created.append(f"role {name} in instance profile {name}")

    # -- entry -------------------------------------------------------------------------------------
    def identity(self, create: bool = False) -> ControllerIdentity:
        """Look for (``create``: make) the controller's identity; see the module doc for the failure rules."""
        role, job = self.settings.controller_role, self.settings.job_storage_role
        account, partition = self._who()
        run = _Run(create)
        board = self.board
        if board is None:
            run.missing.append(f"profile setting storage_uri (an s3:// bucket: the controller's board is "
                               f"{BOARD_PREFIX}/ there)")
            if create:
                raise ConfigError(f"profile {self.settings.profile_name!r} has no s3:// storage_uri: the controller "
                                  f"keeps its board in that bucket (under {BOARD_PREFIX}/)",
                                  hint="set the profile's storage_uri to s3://BUCKET (a bucket of this account)")
        values = {"ACCOUNT_ID": account, "CONTROLLER_ROLE": role, "JOB_STORAGE_ROLE": job,
                  "BOARD_PATH": board or "BOARD_PATH"}
        before = len(run.created)
        self._role(run, role, document(CONTROLLER_TRUST, partition, **values), "the account's controller machine")
        new_role = len(run.created) > before
        if board is not None:
            self._policy(run, role, document(CONTROLLER_POLICY, partition, **values))
        self._instance_profile(run, role, new_role)
        self._role(run, job, document(JOB_TRUST, partition, **values),
                   "job machines' storage credentials, assumed by the controller")
        if board is not None:
            self._policy(run, job, document(JOB_POLICY, partition, **values))
        if run.denied:
            doing = "create" if create else "look up"
            raise AuthError(
                f"profile {self.settings.profile_name!r} may not {doing} the controller's IAM identity: AWS refused "
                + ", ".join(run.denied),
                hint=f"ask an administrator to grant {', '.join(run.denied)} (all the app needs for this: "
                     f"resources/policies/{ADDITIONS}), or to create the roles {role} and {job} and the instance "
                     f"profile {role} from resources/policies/aws-controller-*.json and aws-job-storage-*.json")
        missing = tuple(run.missing) if not create else ()
        arn = f"arn:{partition}:iam::{account}"
        details = {"account": account, "role_arn": f"{arn}:role/{role}", "instance_profile": role,
                   "instance_profile_arn": f"{arn}:instance-profile/{role}", "job_storage_role": job,
                   "job_storage_role_arn": f"{arn}:role/{job}"}
        if board is not None:
            details["board"] = f"s3://{board}/"
        return ControllerIdentity(name=role, ready=not missing, created=tuple(run.created), missing=missing,
                                  policy_files=POLICY_FILES, details=details)
