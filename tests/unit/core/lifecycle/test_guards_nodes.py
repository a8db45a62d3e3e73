"""Guards over a multi-node launch: the head's exit ends the job, a failing node too; idle means every node idle."""

from __future__ import annotations

import dataclasses

from workbench.core.domain.models import GpuSample, Instance, InstanceState
from workbench.core.lifecycle.guards import finished_nodes

from test_guards import Clock, acc, billable, engine, launch, spec  # noqa: F401 - the fixture

NODE = Instance("fk", "fk", "n0", "L", "fake-east", "t", InstanceState.RUNNING, extra={"node_rank": 0})


def _node(rank: int, code: int | None = None, state: InstanceState = InstanceState.RUNNING) -> Instance:
    return dataclasses.replace(NODE, instance_id=f"n{rank}", exit_code=code, state=state, extra={"node_rank": rank})


def test_the_head_decides_a_clean_worker_does_not_a_failed_one_does():
    assert finished_nodes([_node(0), _node(1, 0)]) == []  # a worker done early: the job goes on
    assert [i.instance_id for i in finished_nodes([_node(0, 0), _node(1)])] == ["n0"]
    assert [i.instance_id for i in finished_nodes([_node(0), _node(1, 3)])] == ["n1"]  # a failure ends it
    assert [i.instance_id for i in finished_nodes([_node(0, 0), _node(1, 3)])] == ["n0", "n1"]
    single = dataclasses.replace(NODE, exit_code=0, extra={})
    assert finished_nodes([single]) == [single]


def _second_node(acc, inst: Instance) -> Instance:
    head = inst.with_state(inst.state, extra={**inst.extra, "node_rank": 0, "num_nodes": 2})
    other = dataclasses.replace(head, instance_id=inst.instance_id + "-node1", extra={**head.extra, "node_rank": 1})
    acc.store.upsert_instance(head)
    acc.store.upsert_instance(other)
    return other


def _gpu(acc, iid, times, util):
    acc.store.add_samples([GpuSample(iid, t, 0, util, 100.0, 16000.0) for t in times])


def test_idle_needs_every_node_idle(acc):  # noqa: F811 - the fixture
    lid, inst = launch(acc, spec("  idle_minutes: 5\n  idle_util_below: 10\n", runtime="24h"))
    other = _second_node(acc, inst)
    t0 = inst.launched_at
    _gpu(acc, inst.instance_id, [t0 + s for s in range(0, 900, 60)], 2.0)  # the head idles
    eng, _ = engine(acc, Clock(t0 + 890))
    assert eng.poll(refresh=False) == []  # node 1 has no readings: it may be the one working
    _gpu(acc, other.instance_id, [t0 + s for s in range(0, 900, 60)], 95.0)
    assert eng.poll(refresh=False) == []  # node 1 is busy
    acc.store.add_samples([GpuSample(other.instance_id, t0 + s, 0, 1.0, 1, 2) for s in range(600, 900, 30)])
    _gpu(acc, other.instance_id, [t0 + s for s in range(900, 1300, 60)], 1.0)
    _gpu(acc, inst.instance_id, [t0 + s for s in range(900, 1300, 60)], 1.0)
    eng2, _ = engine(acc, Clock(t0 + 1290))
    assert [(e.guard, e.action) for e in eng2.poll(refresh=False)][:1] == [("idle", "teardown")]
    assert billable(acc, lid) == []
