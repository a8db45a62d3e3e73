"""What every command needs: the store and the accounts, opened lazily, closed once."""

from __future__ import annotations

import sys
import threading
from functools import cached_property

from workbench.core import applog, paths
from workbench.core.providers.accounts import Accounts
from workbench.core.store.database import Store


class CliContext:
    """Opened per CLI invocation; not shared between threads except through Accounts (thread-safe)."""

    def __init__(self, json_output: bool = False, verbose: bool = False, mfa_code: str | None = None) -> None:
        self.json = json_output
        self.verbose = verbose
        applog.setup(paths.log_dir(), verbose=verbose)
        ask_for_codes(mfa_code)

    @cached_property
    def store(self) -> Store:
        store = Store.open()
        if store.recovered_from is not None:
            sys.stderr.write(
                f"warning: the state database was damaged and has been moved aside to "
                f"{store.recovered_from}; starting with a fresh one (running machines are found "
                f"again from the providers)\n")
        return store

    @cached_property
    def accounts(self) -> Accounts:
        from workbench.core.remote import ssh_cleanup

        ssh_cleanup.install()  # every teardown of this command cleans the app's ssh config up
        return Accounts(self.store)

    def close(self) -> None:
        if "store" in self.__dict__:
            self.store.close()


def ask_for_codes(given: str | None) -> None:
    """How this command answers a login node that asks for a one-time code after the key (2FA, a Slurm cluster):
    ``--mfa-code`` once, else the terminal (each code is asked once: the connection that took it is kept for the rest
    of the command), else never (the command fails with ``mfa_required``)."""
    import getpass

    from workbench.core.remote import logins

    left = [given.strip()] if given and given.strip() else []
    lock = threading.Lock()

    def ask(where: str) -> str | None:
        with lock:
            if left:
                return left.pop()
            if given or not sys.stdin.isatty():
                return None
            try:
                return getpass.getpass(f"one-time code for {where}: ")
            except (EOFError, OSError):
                return None

    logins.set_prompter(ask)
