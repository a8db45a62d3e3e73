"""Issue 29: one rule for the default idle guard, whichever file a job comes from.

The idle guard watches GPU use, so a job that asks for no GPU gets none by default; the wizard gave
none while a SkyPilot or dstack CPU task read "idle 30 min" (a guard that could never fire).  A GPU job
keeps the default; an idle guard the file sets on purpose stays, even on a CPU job.
"""

from __future__ import annotations

import pytest

from workbench.core.domain.importers import import_text
from workbench.core.domain.models import Guards

DEFAULT_IDLE = Guards().idle_minutes

CASES = [
    ("skypilot CPU", "name: c\nresources:\n  cpus: 4\nenvs:\n  A: b\nrun: echo hi\n", "skypilot", None),
    ("skypilot GPU", "name: g\nresources:\n  accelerators: V100:1\nenvs:\n  A: b\nrun: echo hi\n", "skypilot",
     DEFAULT_IDLE),
    ("skypilot CPU, autostop set", "name: c\nresources:\n  cpus: 4\n  autostop: 10m\nenvs:\n  A: b\nrun: echo hi\n",
     "skypilot", 10),
    ("skypilot GPU alternative", "name: g\nresources:\n  any_of:\n    - instance_type: m5.xlarge\n    - accelerators: T4:1\n"
     "envs:\n  A: b\nrun: echo hi\n", "skypilot", DEFAULT_IDLE),
    ("dstack CPU", "type: task\nname: c\ncommands:\n  - echo hi\nresources:\n  cpu: 4\n", "dstack", None),
    ("dstack GPU", "type: task\nname: g\ncommands:\n  - echo hi\nresources:\n  gpu: V100:1\n", "dstack",
     DEFAULT_IDLE),
    ("dstack CPU, utilization policy", "type: task\nname: c\ncommands:\n  - echo hi\nresources:\n  cpu: 4\n"
     "utilization_policy:\n  min_gpu_utilization: 10\n  time_window: 20m\n", "dstack", 20),
    ("workbench CPU", "name: c\nrun: echo hi\n", "workbench", None),
    ("workbench GPU", "name: g\nrun: echo hi\nresources:\n  gpu: V100\n", "workbench", DEFAULT_IDLE),
]


@pytest.mark.parametrize("label,text,kind,idle", CASES, ids=[c[0] for c in CASES])
def test_default_idle_guard_only_for_jobs_with_gpus(label, text, kind, idle):
    result = import_text(text, source="job.yaml")
    assert result.kind == kind, result.notes
    assert result.spec is not None, result.notes
    assert result.spec.guards.idle_minutes == idle
