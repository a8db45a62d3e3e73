"""Remote jobs over SSH: reach a launched machine, ship the code, run it supervised, follow it.

Pieces, each in its own module (plain Python, no Qt; paramiko is imported lazily):

* :mod:`.hostkeys`   the app's own known_hosts: pinned keys from the cloud's console output,
                     else trust on first use; a changed key refuses to connect.
* :mod:`.sshconfig`  the ``~/.ssh/config`` include file the app writes (``ssh <name>``, VS Code).
* :mod:`.connection` one SSH connection (paramiko Transport) with the app's key, run/stream/SFTP,
                     and the mapping of network failures to "still booting" (TransientError).
* :mod:`.ignore`     ``.workbenchignore`` / ``.gitignore`` rules for the upload.
* :mod:`.transfer`   upload of the workdir (size first, progress callbacks) and ``download``.
* :mod:`.supervisor` the scripts that run ``setup`` once and ``run`` as a supervised unit that
                     outlives the connection and enforces ``on_finish`` on the machine itself.
* :mod:`.logs`       log streaming by byte offset into the data folder (resumes without duplicates).
* :mod:`.job`        one remote job end to end: wait for SSH, upload, start, follow, on_finish.
* :mod:`.jobs`       the set of remote jobs and telemetry channels an app session drives.

Threading: everything here blocks on the network and runs on worker threads; callbacks are
called on those threads.  Failure rules: only :mod:`workbench.core.domain.errors` types escape.
"""
