"""Desktop app bootstrap: logging, QApplication, language, theme, store, main window.

``WORKBENCH_LANG`` (``en``, ``zh_CN``, ``system``) overrides the language
setting for one run (screenshots, support); the Settings menu changes it for good.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Sequence

from workbench.core.domain.errors import WorkbenchError

log = logging.getLogger("workbench.app")


def make_application(argv: Sequence[str] | None = None):
    """The QApplication with name, icon, language and theme applied (idempotent)."""
    from PySide6.QtWidgets import QApplication

    from workbench.ui import i18n

    from workbench.ui.common import theme
    from workbench.ui.common.icons import icon
    from workbench.ui.runtime.settings import UiSettings

    app = QApplication.instance() or QApplication([sys.argv[0], *(argv or [])])
    app.setApplicationName("Cloud GPU Workbench")
    app.setOrganizationName("cloud-gpu-workbench")
    app.setDesktopFileName("cloud-gpu-workbench")
    settings = UiSettings()
    lang = i18n.install(os.environ.get("WORKBENCH_LANG") or settings.language)
    log.info("language %s", lang)
    theme.apply(settings.theme)
    app.setWindowIcon(icon("app"))
    return app


def main(argv: Sequence[str] | None = None) -> int:
    from PySide6.QtWidgets import QMessageBox

    app = make_application(argv)
    try:
        from workbench.core import applog, paths

        applog.setup(paths.log_dir())
        from workbench.core.providers.accounts import Accounts
        from workbench.core.store.database import Store

        store = Store.open()
    except WorkbenchError as exc:
        QMessageBox.critical(None, "Cloud GPU Workbench", str(exc))
        return exc.exit_code
    from workbench.ui.i18n import tr
    from workbench.ui.shell.main_window import MainWindow

    win = MainWindow(Accounts(store))
    if store.recovered_from is not None:
        win.statusBar().showMessage(tr("The state database was damaged and moved to {path}; machines are being "
                                       "found again from the providers.").format(path=store.recovered_from))
    win.show()
    log.info("main window shown")
    try:
        return app.exec()
    finally:
        # drop the window (and its pyqtgraph plots) while Qt is still up: a plot that is
        # garbage-collected during interpreter shutdown can crash the exit
        win.session.shutdown()
        win.deleteLater()
        del win
        store.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
