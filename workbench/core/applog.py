"""Application logging: one rotating file in the user log folder, secrets scrubbed.

Loggers are named per area (``workbench.store``, ``workbench.launch`` …).
Any secret value the app handles is registered with :func:`register_secret`
and replaced by ``****`` in every record before it is formatted, as a second
line of defence behind "never pass a secret to a logger".
"""

from __future__ import annotations

import logging
import logging.handlers
import threading
from pathlib import Path

_secrets: set[str] = set()
_lock = threading.Lock()
_configured: list[logging.Handler] = []

LOG_FILE = "workbench.log"
#: libraries that log tracebacks of expected events (paramiko: every "SSH not up yet" while a machine
#: boots); without a handler of their own logging's last resort prints them on the user's terminal
LIBRARY_LOGGERS = ("paramiko",)


_repeats: set[tuple[str, str]] = set()


def first_time(key: str, what: str) -> bool:
    """True the first time this process sees (``key``, ``what``): log a repeated failure's traceback once.

    An unusable profile fails on every refresh (every few seconds); its traceback once and then one
    line per refresh keeps the log readable (~5,900 traceback lines in ten minutes otherwise).
    """
    with _lock:
        if (key, what) in _repeats:
            return False
        _repeats.add((key, what))
        return True


def register_secret(value: str) -> None:
    """Never let ``value`` reach a log file (short values are ignored: too many false hits)."""
    if value and len(value) >= 4:
        with _lock:
            _secrets.add(value)


def scrub(text: str) -> str:
    with _lock:
        values = sorted(_secrets, key=len, reverse=True)
    for v in values:
        text = text.replace(v, "****")
    return text


class _ScrubFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if _secrets:
            record.msg = scrub(record.getMessage())
            record.args = None
            if record.exc_info and not record.exc_text:
                record.exc_text = scrub(logging.Formatter().formatException(record.exc_info))
                record.exc_info = None
        return True


class _LogFile(logging.handlers.RotatingFileHandler):
    """The log file; a record it cannot write (a full disk, a removed folder) is dropped quietly.

    logging's default prints "--- Logging error ---" and a traceback to stderr, in the middle of
    the user's output, for what is never the user's real problem (that is reported on its own).
    """

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        pass


def setup(log_dir: Path, level: int = logging.INFO, verbose: bool = False) -> Path:
    """Attach the rotating file handler (idempotent); ``verbose`` also logs to stderr."""
    root = logging.getLogger("workbench")
    libraries = [logging.getLogger(name) for name in LIBRARY_LOGGERS]
    for h in _configured:
        root.removeHandler(h)
        for lib in libraries:
            lib.removeHandler(h)
    _configured.clear()
    path = log_dir / LOG_FILE
    fh = _LogFile(path, maxBytes=2_000_000, backupCount=5, encoding="utf-8")
    fh.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    fh.addFilter(_ScrubFilter())
    handlers: list[logging.Handler] = [fh]
    if verbose:
        sh = logging.StreamHandler()
        sh.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        sh.addFilter(_ScrubFilter())
        handlers.append(sh)
    for h in handlers:
        root.addHandler(h)
        _configured.append(h)
    root.setLevel(logging.DEBUG if verbose else level)
    for lib in libraries:  # their warnings go to the log file, not (through logging's last resort) to stderr
        lib.addHandler(fh)
        lib.setLevel(logging.WARNING)
        lib.propagate = False
    return path
