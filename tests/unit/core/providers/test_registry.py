"""Entry-point discovery: built-in and out-of-tree plugins, broken ones isolated with a reason."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from workbench.core.providers import registry
from workbench.core.domain.errors import NotFoundError, PluginError
from workbench.core.domain.models import Profile
from workbench.core.providers.contract import Provider, ProviderContext

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "plugins"


@pytest.fixture
def fixture_plugins(monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES))
    importlib.invalidate_caches()
    yield
    for name in [m for m in sys.modules if m.startswith(("workbench_fakecloud", "workbench_broken"))]:
        sys.modules.pop(name, None)


def _dist_info(root: Path, name: str, entry_points: str) -> None:
    d = root / f"{name}-0.1.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (d / "entry_points.txt").write_text(f"[workbench.providers]\n{entry_points}\n")


def test_builtin_local_provider_is_discovered():
    entries = registry.discover()
    assert entries["local"].available, entries["local"].reason
    assert entries["local"].distribution == "cloud-gpu-workbench"
    assert issubclass(entries["local"].cls, Provider)


def test_out_of_tree_plugin_found_and_broken_plugin_isolated(fixture_plugins):
    entries = registry.discover()
    fake = entries["fakecloud"]
    assert fake.available and fake.distribution == "workbench-fakecloud" and fake.version == "0.1.0"
    broken = entries["broken"]
    assert not broken.available
    assert "RuntimeError" in broken.reason and "deliberately broken" in broken.reason
    assert entries["local"].available  # the others keep working
    with pytest.raises(PluginError, match="unavailable.*deliberately broken"):
        registry.get(entries, "broken")


def test_unknown_provider_names_the_known_ones():
    with pytest.raises(NotFoundError) as ei:
        registry.get(registry.discover(), "nosuchcloud")
    assert "local" in ei.value.hint


def test_missing_sdk_and_non_provider_entry_points(tmp_path, monkeypatch):
    _dist_info(tmp_path, "wb_missing", "aws = workbench_missing_sdk_xyz.provider:P")
    _dist_info(tmp_path, "wb_notaclass", "notaclass = json:dumps")
    _dist_info(tmp_path, "wb_wrongid", "wrongid = workbench_local.provider:LocalProvider")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    entries = registry.discover()
    assert "missing module" in entries["aws"].reason and "[aws] extra" in entries["aws"].reason
    assert entries["notaclass"].reason == "entry point is not a workbench Provider class"
    assert "does not match" in entries["wrongid"].reason
    assert entries["local"].available


def test_constructor_failure_becomes_plugin_error(tmp_path):
    class Exploding(Provider):  # type: ignore[misc]
        id = "exploding"
        display_name = "Exploding"

        def __init__(self, *a, **k):
            raise ValueError("boom")

    Exploding.__abstractmethods__ = frozenset()
    with pytest.raises(PluginError, match="failed to start: ValueError: boom"):
        registry.construct(Exploding, Profile("p", "exploding"), {}, ProviderContext("i", tmp_path))


def test_a_missing_cloud_sdk_is_found_at_discovery_with_the_exact_fix(monkeypatch):
    real = registry._importable
    monkeypatch.setattr(registry, "_importable", lambda m: m not in ("boto3", "botocore") and real(m))
    entries = registry.discover()
    aws = entries["aws"]
    assert not aws.available and aws.cls is None and aws.loaded is not None  # the class itself still loads
    assert "'boto3'" in aws.reason and "[aws] extra" in aws.reason
    assert aws.fix == "pip install 'cloud-gpu-workbench[aws]'"
    assert aws.display_name == "Amazon Web Services (EC2)" and aws.to_json()["fix"] == aws.fix
    assert aws.status == f"unavailable: {aws.reason}; fix: {aws.fix}"
    assert entries["azure"].available and entries["local"].available
    with pytest.raises(PluginError) as info:
        registry.get(entries, "aws")
    assert "unavailable" in info.value.message and info.value.hint == f"install it with: {aws.fix}"


def test_a_module_missing_later_becomes_an_error_with_the_fix():
    err = registry.missing_module_error(ModuleNotFoundError("No module named 'botocore'", name="botocore.session"))
    assert isinstance(err, PluginError) and "botocore.session" in err.message
    assert err.hint == "install it with: pip install 'cloud-gpu-workbench[aws]'"
    assert registry.missing_module_error(ModuleNotFoundError(name="azure.identity")).hint.endswith("[azure]'")
    assert registry.missing_module_error(ModuleNotFoundError(name="yaml")).hint == "install it with: pip install yaml"
