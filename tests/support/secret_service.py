"""The one switch for tests that talk to the real Secret Service (keyring over D-Bus).

`make test` runs pytest under scripts/with-secret-service.sh (a private D-Bus session with an
unlocked gnome-keyring) and sets ``WORKBENCH_SECRET_SERVICE=1``.  A test that needs it carries
the ``keyring`` marker (registered in pyproject.toml)::

    @pytest.mark.keyring                      # or: from workbench_testing import needs_secret_service
    def test_save_puts_the_secret_in_the_keyring(...): ...

Without the variable such a test is skipped with one reason (and under ``CI=true`` that skip
fails the run: tests/support/honest_run.py).  With it, nothing is skipped: a Secret Service that
does not answer is a failure of the test, with the keyring's own error.
"""

from __future__ import annotations

import os

import pytest

HAS_SECRET_SERVICE = os.environ.get("WORKBENCH_SECRET_SERVICE") == "1"
REASON = ("needs the private Secret Service that `make test` starts "
          "(scripts/with-secret-service.sh with WORKBENCH_SECRET_SERVICE=1)")

#: the marker itself, for modules that import it by name
needs_secret_service = pytest.mark.keyring


def skip_without_secret_service(item: pytest.Item) -> None:
    """pytest_runtest_setup part: skip a ``keyring`` test when no Secret Service was started."""
    if item.get_closest_marker("keyring") is not None and not HAS_SECRET_SERVICE:
        pytest.skip(REASON)
