"""Fake training loop for the local smoke example (standard library only).

Prints one "epoch N loss X" line per epoch, then writes results/metrics.json
in the current folder, so a run shows live logs and leaves a result behind.
"""

import json
import math
import os
import sys
import time
from pathlib import Path


def main() -> int:
    epochs = int(os.environ.get("EPOCHS", "5"))
    pause = float(os.environ.get("SLEEP_SECONDS", "0.5"))
    losses = []
    for epoch in range(1, epochs + 1):
        time.sleep(pause)
        loss = round(2.3 * math.exp(-0.6 * epoch) + 0.05, 4)
        losses.append(loss)
        # flush: stdout is a pipe under the workbench, and logs should appear live.
        print(f"epoch {epoch} loss {loss}", flush=True)
    out = Path("results")
    out.mkdir(exist_ok=True)
    metrics = {"epochs": epochs, "final_loss": losses[-1] if losses else None, "losses": losses}
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    print(f"wrote {out / 'metrics.json'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
