"""Object storage for jobs: mounts checked and local folders uploaded before a launch (:mod:`.checks`,
:mod:`.upload`), the machine-side agent's config and short-lived credentials (:mod:`.machine`), and the
capability cloud plugins implement (:mod:`.contract`).  Plain Python: the SDKs live in the plugins,
rclone on the machine."""
