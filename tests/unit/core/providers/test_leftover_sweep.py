"""The end of a teardown: delete the launches' leftovers, verify, name what remains."""

from __future__ import annotations

import pytest

from workbench.core.domain.errors import AuthError, PluginError, TransientError
from workbench.core.domain.models import Resource
from workbench.core.providers.leftover_sweep import first_failure, still_running, sweep


def res(rid: str, kind: str = "vpc") -> Resource:
    return Resource("fake", "p", rid, kind, "r1", "L1")


class Cloud:
    """Resources listed until deleted; a deleted one stays listed for ``lag`` more listings."""

    def __init__(self, *ids: str, lag: int = 0, refuse: tuple[str, ...] = ()) -> None:
        self.listed = {i: res(i) for i in ids}
        self.lag, self.refuse, self.gone, self.listings = lag, refuse, {}, 0

    def list_left(self) -> list[Resource]:
        self.listings += 1
        for rid, left in list(self.gone.items()):
            if left <= 0:
                self.listed.pop(rid, None)
            self.gone[rid] = left - 1
        return sorted(self.listed.values(), key=lambda r: r.resource_id)

    def delete(self, found: list[Resource]) -> list[tuple[Resource, BaseException]]:
        failures: list[tuple[Resource, BaseException]] = []
        for r in found:
            if r.resource_id in self.refuse:
                failures.append((r, PluginError("DependencyViolation")))
            else:
                self.gone[r.resource_id] = self.lag
        return failures


def test_a_clean_sweep_lists_twice_and_raises_nothing() -> None:
    cloud = Cloud("vpc-1", "sg-1")
    sweep("r1", cloud.list_left, cloud.delete)
    assert cloud.listed == {} and cloud.listings == 2


def test_what_remains_is_named_with_the_first_failure_s_cause() -> None:
    cloud = Cloud("vpc-1", "sg-1", refuse=("vpc-1",))
    with pytest.raises(TransientError, match=r"leftovers of the launch remain in r1: vpc vpc-1 \(DependencyViolation\)"):
        sweep("r1", cloud.list_left, cloud.delete)
    with pytest.raises(TransientError, match=r"remain in r1: vpc vpc-1 \(PluginError\)"):
        sweep("r1", cloud.list_left, cloud.delete, cause_of=lambda exc: type(exc).__name__)


def test_a_cloud_that_deletes_later_is_waited_for_up_to_settle_s() -> None:
    slept: list[float] = []
    now = [0.0]

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    cloud = Cloud("vpc-1", lag=2)
    with pytest.raises(TransientError, match="vpc vpc-1"):  # no settling: still listed
        sweep("r1", cloud.list_left, cloud.delete)
    cloud = Cloud("vpc-1", lag=2)
    sweep("r1", cloud.list_left, cloud.delete, settle_s=10, poll_s=1.0, clock=lambda: now[0], sleep=sleep)
    assert slept == [1.0, 1.0] and cloud.listed == {}
    cloud = Cloud("vpc-1", lag=50)
    with pytest.raises(TransientError):
        sweep("r1", cloud.list_left, cloud.delete, settle_s=3, poll_s=1.0, clock=lambda: now[0], sleep=sleep)


def test_still_running_and_first_failure_messages() -> None:
    err = still_running("r1", ["i-1", "i-2"], 600, "shutting down")
    assert err.message == "2 instance(s) in r1 were still shutting down after 600 s: i-1, i-2" and err.hint
    assert first_failure([], lambda r, e: AuthError("x")) is None
    failures = [(res("sg-1", "sg"), RuntimeError("no")), (res("vol-1", "volume"), RuntimeError("no"))]
    err = first_failure(failures, lambda r, e: AuthError(f"deleting {r.kind} {r.resource_id}: refused", "ask"))
    assert isinstance(err, AuthError) and err.message == "deleting sg sg-1: refused (and 1 more)" and err.hint == "ask"
