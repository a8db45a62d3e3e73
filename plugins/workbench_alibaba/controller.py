"""The controller machine's own identity on Alibaba Cloud (issue 33): the RAM role ``workbench-controller``.

What exists once ``controller_identity(create=True)`` ran (fixed names: a second run finds it all):

    RAM role     workbench-controller   trusted by ecs.aliyuncs.com only (resources/policies/
                                        alibaba-controller-trust.json): an instance it is attached to gets its
                                        temporary credentials from the metadata service, never a user's key
    RAM policy   workbench-controller   (custom) alibaba-controller-ram-policy.json with this install's id and
                                        the profile's storage role filled in: reads; creates only with the
                                        request tag ``workbench:owner=<install id>``; stop, release, delete only
                                        of resources carrying that tag; sts:AssumeRole of the storage role only
                                        (the job machines' OSS credentials), dropped when there is none
    attached     the policy to the role

A launch tagged ``workbench:role=controller`` passes the role (RunInstances ``RamRoleName``: the app needs
``ram:PassRole`` on it) and gets an AutoReleaseTime (:func:`release_deadline`: two hours ahead by default),
the cloud-side deadline the controller moves forward with ``extend`` while it has work.
On that instance the plugin signs in as the role (``auth=ecs_ram_role``: the metadata service's temporary key,
:mod:`.clients`), named by ``ControllerIdentity.machine`` in ``controller.json``.

RAM through its own SDK (alibabacloud_ram20150501, the [alibaba] extra), called like every product through
:meth:`.clients.Api.call` (signature, retries, errors); its actions are ``clients.CONTROLLER_ACTIONS``, which
the app's own policy does not hold: a refusal (NoPermission) becomes an AuthError naming
alibaba-app-controller-additions.json and the exact actions.  Blocking.
"""

from __future__ import annotations

import json
import time

from workbench.core.domain.errors import AuthError, WorkbenchError
from workbench.core.paths import resources_dir
from workbench.core.providers.contract import ROLE_CONTROLLER, TAG_ROLE, ControllerIdentity

from .clients import Api

NAME = "workbench-controller"
TRUST_FILE, POLICY_FILE = "alibaba-controller-trust.json", "alibaba-controller-ram-policy.json"
ADDITIONS_FILE = "alibaba-app-controller-additions.json"
POLICY_FILES = tuple(f"resources/policies/{f}" for f in (POLICY_FILE, TRUST_FILE, ADDITIONS_FILE))
LEASE_S = 2 * 3600.0  # a controller launch's AutoReleaseTime, ahead of now, until it extends it


def is_controller(tags: dict[str, str]) -> bool:
    return tags.get(TAG_ROLE) == ROLE_CONTROLLER


def release_deadline(tags: dict[str, str], not_after: float | None, now: float | None = None) -> float | None:
    """The deadline a launch's AutoReleaseTime follows: the max runtime's; the controller's is a lease of two
    hours (sooner when its own max runtime is), which it renews with ``extend`` while it has work."""
    if not is_controller(tags):
        return not_after
    lease = (time.time() if now is None else now) + LEASE_S
    return lease if not_after is None else min(not_after, lease)


def _document(name: str) -> str:
    return (resources_dir() / "policies" / name).read_text(encoding="utf-8")


def trust_policy() -> str:
    return json.dumps(json.loads(_document(TRUST_FILE)), separators=(",", ":"))


def board_of(storage_uri: str | None, install_id: str) -> tuple[str, str] | None:
    """(bucket, key prefix) of the controller's board in the profile's ``oss://`` bucket (workbench.core.controller.
    board's layout: ``<prefix>/workbench-controller/<install id>``), None without one."""
    if not storage_uri or not storage_uri.startswith("oss://"):
        return None
    bucket, _, prefix = storage_uri[len("oss://"):].partition("/")
    return bucket, "/".join(p for p in (prefix.strip("/"), "workbench-controller", install_id) if p)


def permission_policy(install_id: str, storage_role_arn: str | None, storage_uri: str | None = None) -> str:
    """The shipped policy with this install's owner tag, the storage role and the board in the profile's bucket
    (a statement is dropped when the profile has no such thing)."""
    doc = json.loads(_document(POLICY_FILE))
    board = board_of(storage_uri, install_id)
    statements = []
    for st in doc["Statement"]:
        if st.get("Resource") == "${STORAGE_ROLE_ARN}":
            if not storage_role_arn:
                continue
            st = {**st, "Resource": storage_role_arn}
        text = json.dumps(st)
        if "${BOARD_" in text:
            if board is None:
                continue
            text = (text.replace("${BOARD_PATH}", f"{board[0]}/{board[1]}").replace("${BOARD_BUCKET}", board[0])
                    .replace("${BOARD_PREFIX}", board[1]))
        statements.append(json.loads(text.replace("${INSTALL_ID}", install_id)))
    return json.dumps({"Version": doc["Version"], "Statement": statements}, separators=(",", ":"))


def _code_in(err: WorkbenchError, *codes: str) -> bool:
    return any(c in err.message for c in codes)


class ControllerRole:
    """Looks for, and creates, the controller's RAM role and policy (see the module doc)."""

    def __init__(self, api: Api, install_id: str, storage_role_arn: str | None, storage_uri: str | None = None) -> None:
        self.api = api
        self.policy = permission_policy(install_id, storage_role_arn, storage_uri)
        self.created: list[str] = []

    def run(self, create: bool) -> ControllerIdentity:
        missing: list[str] = []
        role = policy = None
        attached = False
        try:
            role = self._get("GetRole", "EntityNotExist.Role", RoleName=NAME)
            policy = self._get("GetPolicy", "EntityNotExist.Policy", PolicyName=NAME, PolicyType="Custom")
            if role is not None:
                listed = self.api.ram("ListPoliciesForRole", RoleName=NAME)
                attached = any(p.get("PolicyName") == NAME and p.get("PolicyType") == "Custom"
                               for p in (listed.get("Policies") or {}).get("Policy") or [])
            if role is None:
                missing.append(f"RAM role {NAME} (trusted by ecs.aliyuncs.com)")
                if create:
                    role = self._make("CreateRole", f"RAM role {NAME}", "EntityAlreadyExists.Role", RoleName=NAME,
                                      AssumeRolePolicyDocument=trust_policy(),
                                      Description="Cloud GPU Workbench controller machine (issue 33)")
            if policy is None:
                missing.append(f"RAM policy {NAME}")
                if create:
                    self._make("CreatePolicy", f"RAM policy {NAME}", "EntityAlreadyExists.Policy", PolicyName=NAME,
                               PolicyDocument=self.policy,
                               Description="What the Cloud GPU Workbench controller may do: recovery and teardown "
                                           "of this install's tagged launches")
            if not attached:
                missing.append(f"RAM policy {NAME} attached to role {NAME}")
                if create:
                    self._make("AttachPolicyToRole", f"policy {NAME} attached to role {NAME}",
                               "EntityAlreadyExists.Role.Policy", PolicyType="Custom", PolicyName=NAME, RoleName=NAME)
        except AuthError as err:
            err.hint = (f"ask an administrator to attach resources/policies/{ADDITIONS_FILE} to this RAM user or "
                        "role (ram:GetRole, CreateRole, GetPolicy, CreatePolicy, AttachPolicyToRole, "
                        "ListPoliciesForRole on workbench-controller, and ram:PassRole of that role), or to run "
                        "`workbench controller up` once with their own key")
            if create:
                raise
            return ControllerIdentity(NAME, ready=False, missing=(*missing, f"{err.message} ({err.hint})"),
                                      policy_files=POLICY_FILES)
        ready = create or not missing
        arn = ((role or {}).get("Role") or {}).get("Arn", "")
        return ControllerIdentity(NAME, ready=ready, created=tuple(self.created) if create else (),
                                  missing=() if ready else tuple(missing), policy_files=POLICY_FILES,
                                  details={"role_arn": arn, "policy": NAME},
                                  machine={"ram_role_name": NAME})  # settings.ram_role_name on its instance

    def _get(self, action: str, absent: str, **params: str) -> dict | None:
        try:
            return self.api.ram(action, **params)
        except WorkbenchError as err:
            if _code_in(err, absent):
                return None
            raise

    def _make(self, action: str, what: str, exists: str, **params: str) -> dict | None:
        try:
            got = self.api.ram(action, **params)
        except WorkbenchError as err:
            if _code_in(err, exists):  # made meanwhile (another app, another computer): fine
                return None
            raise
        self.created.append(what)
        return got


def controller_identity(api: Api, install_id: str, storage_role_arn: str | None, create: bool,
                        storage_uri: str | None = None) -> ControllerIdentity:
    return ControllerRole(api, install_id, storage_role_arn, storage_uri).run(create)
