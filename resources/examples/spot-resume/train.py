"""A stand-in training loop that checkpoints and resumes, the way a real one should.

Every step writes ``checkpoints/step-NNNNNN.txt`` (a real job would save model and optimizer
state every few minutes). On start it continues from the newest checkpoint it finds: after an
interruption the app relaunches the job and restores the ``sync`` mount, so the checkpoints of the
previous attempt are there (``WORKBENCH_RESUME=1``, ``WORKBENCH_ATTEMPT`` counts the attempts).
On SIGTERM (the interruption notice) it finishes the current step, saves, and exits.

Environment: STEPS (how many steps in all), STEP_SECONDS (time per step), CHECKPOINTS (the folder).
"""

import os
import signal
import sys
import time
from pathlib import Path

folder = Path(os.environ.get("CHECKPOINTS", "checkpoints"))
folder.mkdir(parents=True, exist_ok=True)
steps = int(os.environ.get("STEPS", "100"))
pause = float(os.environ.get("STEP_SECONDS", "1"))
attempt = os.environ.get("WORKBENCH_ATTEMPT", "1")

saved = sorted(folder.glob("step-*.txt"))
step = int(saved[-1].stem.split("-")[1]) if saved else 0
if os.environ.get("WORKBENCH_RESUME") == "1":
    print(f"attempt {attempt}: resumed from checkpoint step {step}", flush=True)
else:
    print(f"attempt {attempt}: starting at step {step}", flush=True)

stopping = False


def on_term(signum, frame):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, on_term)
while step < steps and not stopping:
    step += 1
    time.sleep(pause)  # the "training" of one step
    tmp = folder / f".step-{step:06d}.tmp"
    tmp.write_text(f"{step}\n")
    tmp.replace(folder / f"step-{step:06d}.txt")  # a checkpoint is whole or absent
    print(f"checkpoint step {step}", flush=True)
if stopping:
    print(f"got SIGTERM: stopping after checkpoint step {step}", flush=True)
    sys.exit(143)
print(f"done: {step} steps", flush=True)
