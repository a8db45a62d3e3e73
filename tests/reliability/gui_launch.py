"""A GUI process for the crash and concurrency tests: opens the real MainWindow and launches through core.

    python gui_launch.py SPEC PROVIDER SECONDS

Opens MainWindow (offscreen) on the WORKBENCH_HOME store with a 300 ms refresh, launches SPEC on
PROVIDER through the launcher on the Session's worker (as the wizard does), keeps the event loop
turning for SECONDS and exits 0 (prints "launched <id>" when the launch returned).  The tests
SIGKILL it at their chosen point.
"""

from __future__ import annotations

import sys


def main() -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from workbench.core.providers.accounts import Accounts
    from workbench.core.domain.jobspec import load_spec
    from workbench.core.lifecycle.launcher import execute, choose_offer
    from workbench.core.store.database import Store
    from workbench.ui.runtime.lanes import profile_lane
    from workbench.ui.shell.main_window import MainWindow

    spec_path, provider, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    app = QApplication([])
    store = Store.open()
    accounts = Accounts(store)
    win = MainWindow(accounts, refresh_ms=300)
    win._quitting = True  # exit without the quit dialog
    win.show()

    def launch() -> str:
        lp = choose_offer(accounts, load_spec(spec_path), provider=provider)
        execute(accounts, lp)
        return lp.launch_id

    def done(lid: str) -> None:
        print(f"launched {lid}", flush=True)

    def failed(exc: BaseException) -> None:
        print(f"launch failed: {exc}", flush=True)

    QTimer.singleShot(200, lambda: win.session.mutate(launch, lane=profile_lane(provider)).then(done).fail(failed))
    QTimer.singleShot(int(seconds * 1000), app.quit)
    app.exec()
    win.session.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
