"""`make run` installs every in-tree cloud's SDK: the [clouds] extra names every provider's extra."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from workbench.core.providers.registry import discover

ROOT = Path(__file__).resolve().parents[2]


def test_make_run_installs_the_sdk_of_every_in_tree_cloud():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    [clouds] = extras["clouds"]
    named = set(re.search(r"\[(.*)\]", clouds).group(1).split(","))
    in_tree = {pid: e.loaded for pid, e in discover().items()
               if e.distribution == "cloud-gpu-workbench" and e.loaded is not None}
    wanted = {cls.install_extra for cls in in_tree.values() if cls.install_extra}
    assert wanted >= {"aws", "azure"} and wanted <= named, (wanted, named)
    assert all(extra in extras for extra in wanted)
    makefile = (ROOT / "Makefile").read_text()
    stamp = makefile.split("$(VENV)/.stamp-run:", 1)[1].split("\n\n", 1)[0]
    assert "pip install" in stamp and "'.[clouds]'" in stamp


def test_the_self_test_names_every_provider_this_repository_ships():
    from workbench.cli.selftest import IN_TREE_PROVIDERS

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert set(IN_TREE_PROVIDERS) == set(project["entry-points"]["workbench.providers"])
