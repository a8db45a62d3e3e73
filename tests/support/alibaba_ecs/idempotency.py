"""ClientToken idempotency: the same token with the same parameters answers what the first call answered;
with other parameters, ``IdempotentParameterMismatch`` (the behaviour the ECS and VPC API references describe
for ClientToken: "ensures the idempotence of the request")."""

from __future__ import annotations

from typing import Any

from .errors import ApiError


def idempotent(ctx: Any, action: str, make: Any) -> dict[str, Any]:
    token = ctx.params.get("ClientToken")
    if not token:
        return make()
    key = (action, ctx.params.get("RegionId") or "", token)
    seen = ctx.space.tokens.get(key)
    mine = ctx.params.signature_free()
    if seen is not None:
        if seen[0] != mine:
            raise ApiError(400, "IdempotentParameterMismatch", "Request uses a client token in a previous request "
                           "but is not identical to that request.")
        return seen[1]
    result = make()
    ctx.space.tokens[key] = (mine, result)
    return result
