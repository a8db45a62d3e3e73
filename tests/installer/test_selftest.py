"""`workbench --self-test`'s keyring verdicts: a frozen app that lost keyring's entry points must fail."""

from __future__ import annotations

import sys
from importlib import metadata

from workbench.cli import selftest
from workbench.core.domain.errors import AuthError


class FakeEP:
    def __init__(self, name, fails=False):
        self.name, self._fails = name, fails

    def load(self):
        if self._fails:
            raise ImportError("no module named secretstorage")
        return object()


class FakeStore:
    def __init__(self, error=None):
        self.error = error

    def check_backend(self):
        if self.error:
            raise self.error

    def backend_name(self):
        return "SecretService Keyring (keyring.backends.SecretService.Keyring)"


NATIVE = selftest.NATIVE_KEYRINGS.get(selftest._platform_key(), ("SecretService",))[0]


def test_no_registered_backends_fails():
    c = selftest.keyring_check(entry_points=[], store=FakeStore())
    assert c.status == "fail" and "not registered" in c.detail and "metadata" in c.hint


def test_only_foreign_backends_registered_fails():
    others = [FakeEP(n) for n in ("macOS", "Windows", "SecretService") if n != NATIVE]
    c = selftest.keyring_check(entry_points=others, store=FakeStore())
    assert c.status == ("fail" if sys.platform in ("linux", "darwin", "win32") else "ok")


def test_native_backend_that_cannot_import_fails():
    c = selftest.keyring_check(entry_points=[FakeEP(NATIVE, fails=True)], store=FakeStore())
    assert c.status == "fail" and "does not import" in c.detail


def test_registered_but_locked_warns_with_the_reason():
    err = AuthError("the keyring is locked", hint="unlock it")
    c = selftest.keyring_check(entry_points=[FakeEP(NATIVE)], store=FakeStore(err))
    assert c.status == "warn" and "not usable now: the keyring is locked" in c.detail and c.hint == "unlock it"


def test_registered_and_usable_is_ok():
    c = selftest.keyring_check(entry_points=[FakeEP(NATIVE)], store=FakeStore())
    assert c.status == "ok" and c.detail.startswith("usable: SecretService")


def test_this_install_registers_its_native_backend():
    c = selftest.keyring_check(entry_points=metadata.entry_points(group="keyring.backends"),
                               store=FakeStore())
    assert c.status == "ok", c.detail


def test_resources_and_store_checks_pass_from_source():
    assert selftest.resources_check().status == "ok"
    assert selftest.store_roundtrip_check().status == "ok"


def test_sdk_names_resolve_to_the_distributions_own_packages():
    import re

    modules_of: dict[str, list[str]] = {}
    for module, dists in metadata.packages_distributions().items():
        for d in dists:
            modules_of.setdefault(re.sub(r"[-_.]+", "-", d).lower(), []).append(module)
    assert selftest._sdk_modules("azure-mgmt-compute", modules_of) == ["azure.mgmt.compute"]  # not all of azure
    assert selftest._sdk_modules("azure_identity", modules_of) == ["azure.identity"]  # "images" is data
    assert selftest._sdk_modules("boto3", modules_of) == ["boto3"]


def test_sdk_requirements_are_the_plugins_extra():
    class Dist:
        requires = ['boto3>=1.34; extra == "aws"', 'azure-identity>=1; extra == "azure"', "PyYAML>=6",
                    'pytest; extra == "test"']

    assert selftest._extra_requirements(Dist(), "aws") == ["boto3"]
    assert selftest._extra_requirements(Dist(), "local") == []


def test_sdk_checks_pass_for_every_available_plugin_from_source():
    checks = selftest.sdk_checks()
    assert checks and all(c.status == "ok" for c in checks), [c.to_json() for c in checks]
    by_name = {c.name: c.detail for c in checks}
    assert "boto3" in by_name["sdk aws"]
