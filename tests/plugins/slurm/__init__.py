"""Tests of the Slurm provider plugin's pure parts and files."""
