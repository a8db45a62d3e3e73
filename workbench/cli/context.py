"""What every command needs: the store and the accounts, opened lazily, closed once."""

from __future__ import annotations

import sys
from functools import cached_property

from workbench.core import applog, paths
from workbench.core.providers.accounts import Accounts
from workbench.core.store.database import Store


class CliContext:
    """Opened per CLI invocation; not shared between threads except through Accounts (thread-safe)."""

    def __init__(self, json_output: bool = False, verbose: bool = False) -> None:
        self.json = json_output
        self.verbose = verbose
        applog.setup(paths.log_dir(), verbose=verbose)

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
