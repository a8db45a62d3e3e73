"""Values and validation: models, errors, GPU names, the job spec. No I/O."""
