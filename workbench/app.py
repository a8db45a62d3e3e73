"""Desktop app bootstrap: logging, QApplication, store, main window."""

from __future__ import annotations

import logging
import sys
from typing import Sequence

from .core import applog, paths
from .core.errors import WorkbenchError

log = logging.getLogger("workbench.app")


def main(argv: Sequence[str] | None = None) -> int:
    from PySide6.QtWidgets import QApplication, QMessageBox

    app = QApplication.instance() or QApplication([sys.argv[0], *(argv or [])])
    app.setApplicationName("Cloud GPU Workbench")
    app.setOrganizationName("cloud-gpu-workbench")
    try:
        applog.setup(paths.log_dir())
        from .core.accounts import Accounts
        from .core.store import Store

        store = Store.open()
    except WorkbenchError as exc:
        QMessageBox.critical(None, "Cloud GPU Workbench", str(exc))
        return exc.exit_code
    from .ui.main_window import MainWindow

    win = MainWindow(Accounts(store))
    if store.recovered_from is not None:
        win.statusBar().showMessage(f"The state database was damaged and moved to {store.recovered_from}; "
                                    "machines are being found again from the providers.")
    win.show()
    log.info("main window shown")
    try:
        return app.exec()
    finally:
        store.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
