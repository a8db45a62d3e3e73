"""`workbench --self-test`: prove that this install (a source checkout or a packaged bundle) works.

Checks, in order, each reported even when an earlier one failed:

* **plugins**: every ``workbench.providers`` entry point loads (a frozen app that lost the
  package metadata finds none, so the built-in Local provider is required);
* **sdks**: each plugin's cloud SDK (the requirements of its distribution under the extra named
  like the plugin, e.g. ``boto3; extra == "aws"``) imports, and botocore finds its service data:
  plugins import their SDK lazily, so a bundle that lost one would otherwise fail on first use;
* **providers**: every in-tree provider (:data:`IN_TREE_PROVIDERS`: Local, AWS, Azure, Alibaba
  Cloud, Slurm) is usable, its plugin loaded and its SDK imported; a packaged app ships them all, so one
  missing is a failure, named;
* **resources**: the bundled icons and example specs, the app's compiled translations;
* **store**: a SQLite round trip in a throwaway folder (the user's state is not touched);
* **window**: the main window opens and closes (offscreen unless a platform is set), a
  pyqtgraph plot draws (the monitor builds its plots on first use), and Qt's own translations for
  the shipped languages are where Qt looks for them;
* **keyring**: the platform's native keyring backend is registered (frozen apps commonly lose
  keyring's entry points and fall back to "no keyring"); whether it is usable right now
  (unlocked, Secret Service running) is reported too, as a warning when not.

Exit 0 when nothing failed (warnings allowed), 1 otherwise; ``--json`` prints
``{"ok": bool, "frozen": bool, "checks": [{name, status, detail, hint}]}``.
Runs on the calling thread; opens a QApplication if there is none.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from workbench.core import paths
from workbench.core.providers.credentials import CredentialStore
from workbench.core.domain.errors import WorkbenchError
from workbench.core.providers.registry import discover
from workbench.cli.checks import Check, _report

#: keyring's entry-point names of each platform's native backends (any one is enough)
NATIVE_KEYRINGS = {"linux": ("SecretService", "libsecret", "KWallet"), "darwin": ("macOS",), "win32": ("Windows",)}
SHIPPED_LANGUAGES = ("zh_CN",)
#: the providers this repository ships (pyproject.toml's entry points; a test keeps the two equal)
IN_TREE_PROVIDERS = ("local", "aws", "azure", "alibaba", "slurm")


def _platform_key() -> str:
    return "linux" if sys.platform.startswith("linux") else sys.platform


def plugin_checks() -> list[Check]:
    checks = []
    for e in discover().values():
        if e.available:
            importlib.import_module(e.target.partition(":")[0])
            checks.append(Check(f"plugin {e.id}", "ok", f"{e.target} ({e.distribution} {e.version})"))
        else:
            checks.append(Check(f"plugin {e.id}", "fail", e.reason or "unavailable",
                                "reinstall the app; a packaged app must bundle every plugin and its SDK"))
    if not any(c.name == "plugin local" and c.status == "ok" for c in checks):
        checks.append(Check("plugin local", "fail", "the built-in Local provider was not found",
                            "the package metadata (entry points) is missing from this install"))
    return checks


def providers_check(checks: list[Check]) -> Check:
    """One line naming every in-tree provider as usable (its plugin and SDK checks ok), or which is not."""
    status = {c.name: c.status for c in checks}
    entries = discover()
    usable, broken = [], []
    for pid in IN_TREE_PROVIDERS:
        entry = entries.get(pid)
        label = entry.display_name if entry is not None else pid
        plugin_ok = status.get(f"plugin {pid}") == "ok"
        sdk_ok = status.get(f"sdk {pid}", "ok") == "ok"  # Local has no SDK, so no such check
        if entry is not None and plugin_ok and sdk_ok:
            usable.append(f"{label} ({pid})")
        else:
            why = ("not installed" if entry is None else f"plugin did not load ({entry.reason or 'unavailable'})"
                   if not plugin_ok else "SDK missing")
            broken.append(f"{label} ({pid}): {why}")
    if broken:
        return Check("providers", "fail", "not usable: " + "; ".join(broken) + (
            f"; usable: {', '.join(usable)}" if usable else ""),
            "reinstall the app; a packaged app must bundle every cloud's plugin and SDK")
    return Check("providers", "ok", "usable: " + ", ".join(usable))


def _extra_requirements(dist: metadata.Distribution, extra: str) -> list[str]:
    names = []
    for req in dist.requires or []:
        name, _, marker = req.partition(";")
        if re.search(r"""extra\s*==\s*["']%s["']""" % re.escape(extra), marker):
            names.append(re.split(r"[\s\[<>=!~(]", name.strip(), maxsplit=1)[0])
    return names


def sdk_checks() -> list[Check]:
    """Import every available plugin's SDK packages (see the module docstring)."""
    providers_of = metadata.packages_distributions()  # top-level import name → distributions
    modules_of: dict[str, list[str]] = {}
    for module, dists in providers_of.items():
        for d in dists:
            modules_of.setdefault(re.sub(r"[-_.]+", "-", d).lower(), []).append(module)
    checks = []
    for e in discover().values():
        if not e.available or not e.distribution:
            continue
        try:
            reqs = _extra_requirements(metadata.distribution(e.distribution), e.id)
        except metadata.PackageNotFoundError:
            continue
        if not reqs:
            continue
        imported = []
        try:
            for req in reqs:
                for module in _sdk_modules(req, modules_of):
                    importlib.import_module(module)
                    imported.append(module)
            if "botocore" in sys.modules:  # service models are data files: load one, offline
                import botocore.session

                botocore.session.get_session().get_service_model("ec2")
            checks.append(Check(f"sdk {e.id}", "ok", ", ".join(sorted(set(imported)))))
        except Exception as exc:
            checks.append(Check(f"sdk {e.id}", "fail", f"{type(exc).__name__}: {exc}",
                                "reinstall the app; a packaged app must bundle every plugin's SDK"))
    return checks


def _sdk_modules(requirement: str, modules_of: dict[str, list[str]]) -> list[str]:
    """Import names of one installed distribution: ``azure-mgmt-compute`` → ``azure.mgmt.compute``."""
    key = re.sub(r"[-_.]+", "-", requirement).lower()
    tops = modules_of.get(key)
    if not tops:
        raise ModuleNotFoundError(f"{requirement} is not installed")
    out = set()
    for top in tops:
        if top.startswith("_") or importlib.util.find_spec(top) is None:
            continue  # data folders some distributions ship beside their package ("images")
        spec = importlib.util.find_spec(top)
        if spec.origin is None and spec.submodule_search_locations:  # a namespace (azure): the dist's own part
            parts = key.replace("-", ".").split(".")
            while len(parts) > 1 and importlib.util.find_spec(".".join(parts)) is None:
                parts.pop()
            top = ".".join(parts)
        out.add(top)
    if not out:
        raise ModuleNotFoundError(f"{requirement} has no importable package")
    return sorted(out)


def resources_check() -> Check:
    root = paths.resources_dir()
    missing = [str(p) for p in (root / "icons" / "app.svg", root / "examples" / "local-smoke.yaml")
               if not p.is_file()]
    catalogues = Path(__file__).resolve().parents[1] / "ui" / "i18n"  # beside workbench.ui.i18n (no Qt import)
    missing += [str(catalogues / f"workbench_{lang}.qm") for lang in SHIPPED_LANGUAGES
                if not (catalogues / f"workbench_{lang}.qm").is_file()]
    if missing:
        return Check("resources", "fail", "missing: " + ", ".join(missing), "reinstall the app")
    return Check("resources", "ok", f"{root} (icons, examples) and the {', '.join(SHIPPED_LANGUAGES)} catalogue")


def controller_check() -> Check:
    """The account's controller installs this app's own code: its wheel can be made (a packaged app carries it)."""
    import tempfile
    import zipfile

    from workbench.core.controller import bundle

    with tempfile.TemporaryDirectory() as tmp:
        wheel = bundle.build_wheel(Path(tmp), ["aws"])
        reqs = bundle.write_requirements(Path(tmp), ["aws"]).read_text(encoding="utf-8")
        names = set(zipfile.ZipFile(wheel).namelist())
    if "workbench/cli/controller.py" not in names or "boto3==" not in reqs:
        return Check("controller", "fail", f"the controller's install is incomplete ({wheel.name})", "reinstall the app")
    return Check("controller", "ok", f"{wheel.name}: {len(names)} files, {len(reqs.splitlines())} pinned requirements")


def store_roundtrip_check() -> Check:
    from workbench.core.domain.models import Profile
    from workbench.core.store.database import Store

    with tempfile.TemporaryDirectory(prefix="workbench-selftest-") as tmp:
        try:
            with Store.open(Path(tmp) / "state.sqlite3") as store:
                store.save_profile(Profile("selftest", "local", "local", settings={"k": "v"}))
                back = store.get_profile("selftest")
                ok = back.settings.get("k") == "v" and store.integrity() == "ok"
            return Check("store", "ok" if ok else "fail", "SQLite round trip" + ("" if ok else " mismatch"))
        except Exception as exc:
            return Check("store", "fail", f"{type(exc).__name__}: {exc}")


def window_checks() -> list[Check]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from workbench.ui.shell.smoke import draw_a_plot, open_and_close_main_window, qt_translations_dir

        title = open_and_close_main_window()
        checks = [Check("window", "ok", f"opened and closed '{title}' ({os.environ['QT_QPA_PLATFORM']})")]
    except Exception as exc:
        return [Check("window", "fail", f"{type(exc).__name__}: {exc}", "run `workbench doctor`")]
    try:
        checks.append(Check("plots", "ok", draw_a_plot()))
    except Exception as exc:
        checks.append(Check("plots", "fail", f"{type(exc).__name__}: {exc}", "reinstall the app"))
    qt_dir = Path(qt_translations_dir())
    missing = [lang for lang in SHIPPED_LANGUAGES if not (qt_dir / f"qtbase_{lang}.qm").is_file()]
    names = ", ".join(f"qtbase_{lang}.qm" for lang in (missing or SHIPPED_LANGUAGES))
    checks.append(Check("qt translations", "fail" if missing else "ok",
                        f"{names} {'missing from' if missing else 'in'} {qt_dir}"))
    return checks


def keyring_check(entry_points=None, store: CredentialStore | None = None) -> Check:
    """Fail when the native backend is not registered; warn when it is but cannot be used now."""
    eps = metadata.entry_points(group="keyring.backends") if entry_points is None else entry_points
    registered = {ep.name: ep for ep in eps}
    wanted = NATIVE_KEYRINGS.get(_platform_key(), ())
    native = [n for n in wanted if n in registered] if wanted else sorted(registered)
    if not native:
        return Check("keyring", "fail",
                     f"keyring's {'/'.join(wanted) or 'native'} backend is not registered "
                     f"(found: {', '.join(sorted(registered)) or 'no backends at all'})",
                     "keyring's package metadata is missing from this install; reinstall the app")
    broken = []
    for name in native:
        try:
            registered[name].load()
        except Exception as exc:
            broken.append(f"{name}: {type(exc).__name__}: {exc}")
    if len(broken) == len(native):
        return Check("keyring", "fail", "the native keyring backend does not import: " + "; ".join(broken),
                     "reinstall the app")
    creds = store or CredentialStore()
    try:
        creds.check_backend()
        return Check("keyring", "ok", f"usable: {creds.backend_name()}")
    except WorkbenchError as exc:
        return Check("keyring", "warn", f"found {', '.join(native)}, but not usable now: {exc.message}",
                     exc.hint or "")


def self_test(as_json: bool) -> int:
    checks = plugin_checks()
    checks.extend(sdk_checks())
    checks.append(providers_check(checks))
    for check in (resources_check, controller_check, store_roundtrip_check):
        try:
            checks.append(check())
        except Exception as exc:  # report every part, whatever broke
            checks.append(Check(check.__name__.replace("_check", ""), "fail", f"{type(exc).__name__}: {exc}"))
    checks.extend(window_checks())
    checks.append(keyring_check())
    return _report(checks, as_json, extra={"frozen": bool(getattr(sys, "frozen", False))})
