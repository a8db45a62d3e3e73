"""The workbench's error tree.

Every error a user can see derives from :class:`WorkbenchError` and carries a
user-facing ``message`` plus an optional ``hint`` saying how to fix it.  No
message may ever contain a secret: callers build messages from field *names*
and provider responses, never from credential values.

The CLI maps the classes to exit codes (see ``workbench.cli``): input errors
exit 1, provider/cloud errors exit 3.
"""

from __future__ import annotations


class WorkbenchError(Exception):
    """Base of all errors meant to be shown to the user."""

    #: CLI exit code for this class of error (1 = user/input error).
    exit_code: int = 1
    #: short machine-readable kind, used in ``--json`` error output.
    kind: str = "error"

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message

    def to_json(self) -> dict[str, str | None]:
        return {"kind": self.kind, "message": self.message, "hint": self.hint}


class SpecError(WorkbenchError):
    """A job spec (YAML) is malformed or invalid; the message names file:line: field."""

    kind = "spec"


class ConfigError(WorkbenchError):
    """Bad user input outside a job spec: unknown profile, bad flag value, unwritable home."""

    kind = "config"


class AuthError(WorkbenchError):
    """Credentials missing, wrong, expired, or no usable keyring backend."""

    exit_code = 3
    kind = "auth"


class NoKeyringError(AuthError):
    """This computer has no secure keyring at all (none installed, or only a plaintext one).

    Not raised for a keyring that is there but locked or did not answer: those stay plain
    AuthErrors, so that a profile whose credential fields are all optional (a named AWS profile,
    ``az login``) goes on without the keyring only when there is none, never because one call failed.
    """


class KeyringLockedError(AuthError):
    """The keyring is there but locked (or its unlock prompt was dismissed): the user unlocks it."""


class QuotaError(WorkbenchError):
    """The account's quota does not allow the request (hint: request an increase)."""

    exit_code = 3
    kind = "quota"


class CapacityError(WorkbenchError):
    """The region/zone has no capacity for the requested type right now."""

    exit_code = 3
    kind = "capacity"


class TransientError(WorkbenchError):
    """Throttling, timeouts, 5xx: worth retrying later with backoff."""

    exit_code = 3
    kind = "transient"


class NotFoundError(WorkbenchError):
    """A named thing (launch id, instance, region, profile) does not exist."""

    kind = "not_found"


class PluginError(WorkbenchError):
    """A provider plugin failed to import, construct, or broke its contract."""

    exit_code = 3
    kind = "plugin"


class StoreError(WorkbenchError):
    """The local state store could not be opened or written."""

    kind = "store"
