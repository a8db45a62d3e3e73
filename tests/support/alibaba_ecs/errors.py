"""The error answer of an Alibaba Cloud RPC API: HTTP status + ``{"RequestId", "HostId", "Code", "Message", "Recommend"}``.

Shape as in every API reference's "Error codes" section and the OpenAPI common error codes page
(https://developer.aliyun.com/ask/278265 quotes it: InvalidAccessKeyId.NotFound 404, SignatureDoesNotMatch 400,
Throttling.User 400 "Request was denied due to user flow control.", SignatureNonceUsed 400).
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None,
                 extra: dict[str, Any] | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})

    def body(self, request_id: str, host: str) -> dict[str, Any]:
        return {"RequestId": request_id, "HostId": host, "Code": self.code, "Message": self.message,
                "Recommend": f"https://api.aliyun.com/troubleshoot?q={self.code}&product=Ecs", **self.extra}


def not_found(kind: str, rid: str) -> ApiError:
    return ApiError(404, f"Invalid{kind}.NotFound", f"The specified {kind} does not exist.",
                    extra={"ResourceId": rid})
