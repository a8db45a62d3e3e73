"""What keeps the session's refresh from stalling the event loop (issue 22's stall row).

Measured causes (docs/benchmarks.md, "Event-loop stall: where the time goes"): the UI thread scanning
the plugins' entry points and importing the SSH/job modules when the first cloud machine appears, and
full cyclic-GC passes over the whole heap holding the interpreter lock.
"""

from __future__ import annotations

import gc
import sys
import threading

from workbench.core.domain.models import Instance, InstanceState
from workbench.core.remote import kinds
from workbench.ui.runtime import session as session_mod
from workbench.ui.runtime.session import Session, Snapshot


def test_refresh_asks_which_plugins_run_jobs_over_ssh_on_the_worker(qtbot, accounts, monkeypatch):
    import workbench.core.providers.registry as registry

    asked_on: list[str] = []

    def fake_discover():
        asked_on.append(threading.current_thread().name)
        return {}  # unknown provider: treated as a machine the app drives over SSH

    monkeypatch.setattr(registry, "discover", fake_discover)
    kinds._over_ssh.cache_clear()
    # two clouds: the remote-jobs manager asks about every instance, not only the first remote one
    insts = tuple(Instance(p, "default", f"i-{p}", f"launch-{p}", "r1", "t1", InstanceState.RUNNING, host="203.0.113.9")
                  for p in ("stallcloud-a", "stallcloud-b"))
    s = Session(accounts)
    s._snapshot_fn = lambda _acc: Snapshot(instances=insts, taken_at=1.0)
    try:
        s.refresh()
        qtbot.waitUntil(lambda: s.snapshot.taken_at == 1.0, timeout=10_000)
        assert len(asked_on) == 4 and threading.main_thread().name not in asked_on, asked_on  # remote? queued?
        assert "workbench.core.remote.jobs" in sys.modules  # imported before the UI thread needed it
        assert s.remote is not None  # the UI thread then handed the machines over (cached answers only)
        assert kinds._over_ssh.cache_info().hits >= 2
    finally:
        s.shutdown()
        if s.remote is not None:
            s.remote.stop_all()
        kinds._over_ssh.cache_clear()
        kinds._batch.cache_clear()


def _collectable(obj: object) -> bool:
    """Whether the cyclic collector still walks ``obj`` (frozen objects are in no generation)."""
    return any(o is obj for o in gc.get_objects())


def test_the_heap_is_frozen_only_after_a_batch_of_new_modules(monkeypatch):
    monkeypatch.setattr(session_mod, "_frozen_at", [len(sys.modules)])
    alive = ["tracked by the collector"]
    assert session_mod.freeze_loaded_modules() is False  # nothing new loaded: no freeze
    assert _collectable(alive)
    monkeypatch.setattr(session_mod, "_frozen_at", [len(sys.modules) - session_mod._FREEZE_STEP])
    assert session_mod.freeze_loaded_modules() is True
    assert not _collectable(alive)  # later passes skip it
    assert session_mod._frozen_at[0] == len(sys.modules)
    again = ["made after the freeze"]
    assert session_mod.freeze_loaded_modules() is False  # and not again until more modules come
    assert _collectable(again)
