"""The test Slurm cluster's stand-in ``nvidia-smi`` (tests/support/slurm.py): recordings per node and GPU subset
for tests/fixtures/nvidia_smi/fake_nvidia_smi.py, and the wrapper that picks one for the GPUs a job was given.

:func:`write` puts into ``root``: ``nvidia/NODE/SUBSET/`` (``list.txt``, ``fields``, ``stream.txt`` in the
real ``--query-gpu=… --format=csv,noheader,nounits`` format, SUBSET like ``0``, ``1``, ``0_1``), a state
folder for each (``nvidia/state/NODE-SUBSET/recording`` holding the recording's absolute path), the
``nodriver`` state for the login node, and into ``bin``: the fake (copied, readable by every user) and
``nvidia-smi``, a shell wrapper that sets ``FAKE_NVIDIA_SMI_STATE`` and runs the fake with the system python3.
"""

from __future__ import annotations

import itertools
import shutil
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "fixtures" / "nvidia_smi" / "fake_nvidia_smi.py"
SYNTHETIC = FAKE.parent / "synthetic"
FIELDS = ("index,uuid,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw,"
          "utilization.memory,power.limit,clocks.sm,clocks.max.sm")
#: name, memory.total MiB, power.limit W, idle and max SM clock MHz (the synthetic recordings' values)
MODELS = {"v100": ("Tesla V100-SXM2-16GB", 16384, 300.0, 135, 1530),
          "a100": ("NVIDIA A100-SXM4-40GB", 40960, 400.0, 210, 1410)}
NODE_MODEL = {"node1": "v100", "node2": "v100", "node3": "a100"}
GPUS_PER_NODE = 2
#: a job's life in six rounds (as v100x1's stream): idle, loading, busy
UTIL = (0, 0, 87, 96, 93, 95)
MEM_SHARE = (0.0, 0.02, 0.6, 0.62, 0.62, 0.62)


def gpu_uuid(node: str, index: int) -> str:
    return "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_URL, f"wb-slurm-test/{node}/{index}"))


def _line(node: str, i: int, k: int) -> str:
    name, mem, plimit, idle, top = MODELS[NODE_MODEL[node]]
    util = UTIL[k]
    busy = util > 0
    power = plimit * (0.1 + 0.75 * util / 100) + i
    return ", ".join(str(v) for v in (
        i, gpu_uuid(node, i), name, util, int(mem * MEM_SHARE[k]), mem, 34 + k + i, f"{power:.2f}",
        round(0.45 * util), f"{plimit:.2f}", top if busy else idle, top))


def write(root: Path, bin_dir: Path) -> None:
    nv = root / "nvidia"
    for node in NODE_MODEL:
        for n in range(1, GPUS_PER_NODE + 1):
            for subset in itertools.combinations(range(GPUS_PER_NODE), n):
                key = "_".join(map(str, subset))
                rec = nv / node / key
                rec.mkdir(parents=True, exist_ok=True)
                (rec / "fields").write_text(FIELDS + "\n")
                (rec / "list.txt").write_text("".join(
                    f"GPU {i}: {MODELS[NODE_MODEL[node]][0]} (UUID: {gpu_uuid(node, i)})\n" for i in subset))
                (rec / "stream.txt").write_text("\n".join(
                    "".join(_line(node, i, k) + "\n" for i in subset) for k in range(len(UTIL))))
                state = nv / "state" / f"{node}-{key}"
                state.mkdir(parents=True, exist_ok=True)
                (state / "recording").write_text(str(rec) + "\n")
    nodriver = nv / "nodriver"
    shutil.copytree(SYNTHETIC / "nodriver", nodriver, dirs_exist_ok=True)
    (nv / "state" / "login").mkdir(parents=True, exist_ok=True)
    (nv / "state" / "login" / "recording").write_text(str(nodriver) + "\n")
    bin_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy(FAKE, bin_dir / "fake_nvidia_smi.py")
    python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
    wrapper = bin_dir / "nvidia-smi"
    wrapper.write_text(f"""#!/bin/sh
# The test Slurm cluster's nvidia-smi (tests/support/slurm_gpus.py): the GPUs this job (step) was given
STATE={nv / 'state'}
if [ -z "$SLURMD_NODENAME" ]; then
  FAKE_NVIDIA_SMI_STATE=$STATE/login
else
  gpus=${{SLURM_STEP_GPUS:-${{SLURM_JOB_GPUS:-$CUDA_VISIBLE_DEVICES}}}}
  if [ -z "$gpus" ] || [ "$gpus" = "NoDevFiles" ]; then
    echo "No devices were found"
    exit 6
  fi
  FAKE_NVIDIA_SMI_STATE=$STATE/$SLURMD_NODENAME-$(echo "$gpus" | tr , _)
fi
export FAKE_NVIDIA_SMI_STATE
exec {python} {bin_dir / 'fake_nvidia_smi.py'} "$@"
""")
    wrapper.chmod(0o755)


def set_period(root: Path, period_ms: int | None) -> None:
    """Make every stream of the stand-in loop every ``period_ms`` whatever ``-lms``/``-l`` asked (None: as asked)."""
    for state in (root / "nvidia" / "state").iterdir():
        if period_ms is None:
            (state / "period_ms").unlink(missing_ok=True)
        else:
            (state / "period_ms").write_text(str(int(period_ms)))
