"""A launch's life: launcher, reconcile, teardown, the app-side guards."""
