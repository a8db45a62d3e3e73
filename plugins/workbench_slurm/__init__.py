"""The ``slurm`` provider: an existing Slurm cluster reached over SSH to its login node."""
