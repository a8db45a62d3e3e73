"""GPU telemetry: nvidia-smi parsing, the hub, ring buffers for plots."""
