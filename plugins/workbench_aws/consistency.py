"""EC2's eventual consistency: a call that names an id the plugin has just been given may not find it yet.

"Eventual consistency in the Amazon EC2 API" (docs.aws.amazon.com/ec2/latest/devguide/
eventual-consistency.html): right after RunInstances other calls with the new instance ids may answer
``InvalidInstanceID.NotFound``, right after CreateSecurityGroup ``InvalidGroup.NotFound`` — which does
not mean the resource is missing (nor, for TerminateInstances, that the instance is gone).  The advice
is to ask again with exponential backoff.  :func:`settled` does that for a call about ids this launch
made itself (never for ids read from a listing: there NotFound means gone).

IAM is eventually consistent too: an instance profile made moments ago may be refused by
RunInstances for a few seconds ("Invalid IAM Instance Profile name", InvalidParameterValue):
:func:`new_instance_profile` says when an answer is that one (the controller's launch retries it).

Threading: blocks the calling worker thread while it waits.  Failure rules: any other error, and the
NotFound one after ``timeout_s``, propagates unchanged.
"""

from __future__ import annotations

import logging
import time
from typing import Callable, TypeVar, Union

from .codes import aws_message, error_code

log = logging.getLogger("workbench.aws.consistency")
T = TypeVar("T")

NEW_INSTANCE = ("InvalidInstanceID.NotFound",)
NEW_GROUP = ("InvalidGroup.NotFound",)
SETTLE_S = 120.0  # the reference speaks of "a couple of seconds … up to a few minutes"
#: error codes to ask again on, or a test of the error
Retry = Union[tuple[str, ...], Callable[[BaseException], bool]]


def new_instance_profile(exc: BaseException) -> bool:
    """RunInstances refusing an instance profile IAM has not propagated to EC2 yet."""
    return error_code(exc) == "InvalidParameterValue" and "iam instance profile" in aws_message(exc).lower()


def settled(call: Callable[[], T], codes: Retry, poll_s: float, timeout_s: float = SETTLE_S,
            clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> T:
    """``call()``, asked again while it fails with one of ``codes`` (or an error ``codes(exc)`` accepts):
    after 1 s (``poll_s`` if shorter), then twice as long each time, at most ``max(poll_s, 1)`` apart,
    until ``timeout_s``."""
    retry = codes if callable(codes) else (lambda exc: error_code(exc) in codes)
    deadline = clock() + timeout_s
    delay = min(poll_s, 1.0)
    while True:
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - only the eventual-consistency answers are retried
            code = error_code(exc)
            left = deadline - clock()
            if not retry(exc) or left <= 0:
                raise
            log.debug("%s for an id just made (not propagated yet): asking again in %.2f s", code, delay)
        sleep(min(delay, left))
        delay = min(delay * 2, max(poll_s, 1.0))
