"""Building providers: one build per profile, never one lock for every profile (accounts.py).

The provider class below blocks in its constructor (as a keyring read or an SDK import does)
until the test lets it go, so the tests see the builds overlap (or wait) instead of guessing.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import pytest

from workbench.core.domain.errors import AuthError, NoKeyringError, PluginError
from workbench.core.domain.models import Profile
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.contract import CredentialField, Provider
from workbench.core.providers.registry import ProviderEntry
from workbench.core.store.database import Store
from workbench_testing import MemoryCredentials

WAIT_S = 10.0
GATE_S = 3 * WAIT_S  # a blocked constructor outlasts any wait of the test's own


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition`` (it watches other threads) until it holds; fail after WAIT_S."""
    tick = threading.Event()
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        tick.wait(0.005)


class BlockingProvider(Provider):
    """A provider whose construction calls ``hook(profile)`` (set by each test) and counts itself."""

    id = "blocking"
    display_name = "Blocking (tests)"
    hook: Callable[[Profile], None] = staticmethod(lambda profile: None)
    built: list[str] = []

    def __init__(self, profile, secrets, context) -> None:
        super().__init__(profile, secrets, context)
        type(self).built.append(profile.name)
        type(self).hook(profile)

    def check_credentials(self):
        raise NotImplementedError

    def regions(self):
        return []

    def offers(self, region=None):
        return []

    def launch(self, req):
        raise NotImplementedError

    def instances(self):
        return []

    def terminate(self, instances):
        pass

    def leftovers(self):
        return []

    def delete(self, resources):
        pass


class EnteringLock:
    """The accounts' lock, noting which threads have entered it (so a test knows who got how far)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.threads: set[int] = set()

    def __enter__(self):
        self.inner.__enter__()
        self.threads.add(threading.get_ident())
        return self

    def __exit__(self, *exc):
        return self.inner.__exit__(*exc)


@pytest.fixture
def accounts(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    BlockingProvider.built = []
    BlockingProvider.hook = staticmethod(lambda profile: None)
    store = Store.open()
    entry = ProviderEntry("blocking", "tests:BlockingProvider", None, None, BlockingProvider)
    acc = Accounts(store, entries={"blocking": entry}, credentials=MemoryCredentials())
    for name in ("a", "b"):
        acc.save_profile(Profile(name, "blocking", None))
    yield acc
    store.close()


def test_two_profiles_are_built_at_the_same_time(accounts):
    # Each construction waits for the other one to have started: only overlapping builds pass.
    both = threading.Barrier(2, timeout=WAIT_S)
    BlockingProvider.hook = staticmethod(lambda profile: both.wait())
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(accounts.provider, accounts.profile(n)) for n in ("a", "b")]
        a, b = (f.result(timeout=2 * WAIT_S) for f in futures)
    assert (a.profile.name, b.profile.name) == ("a", "b")
    assert sorted(BlockingProvider.built) == ["a", "b"]
    assert accounts.provider(accounts.profile("a")) is a  # cached afterwards


def test_one_profile_asked_by_many_threads_is_built_once(accounts):
    lock = accounts._lock = EnteringLock(accounts._lock)
    gate = threading.Event()
    BlockingProvider.hook = staticmethod(lambda profile: gate.wait(GATE_S))
    prof = accounts.profile("a")
    with ThreadPoolExecutor(6) as pool:
        builder = pool.submit(accounts.provider, prof)
        wait_until(lambda: BlockingProvider.built, "the first caller is inside the constructor")
        others = [pool.submit(accounts.provider, prof) for _ in range(5)]
        # The build ends only once every other caller has looked in the cache (entered the lock) …
        wait_until(lambda: len(lock.threads) >= 6 or len(BlockingProvider.built) > 1,
                   "the other callers reached the accounts")
        assert BlockingProvider.built == ["a"]  # … and found the build to wait for instead of starting one
        gate.set()
        first = builder.result(timeout=WAIT_S)
        results = [f.result(timeout=WAIT_S) for f in others]
    assert all(r is first for r in results)
    assert BlockingProvider.built == ["a"]


def test_a_failed_build_reaches_every_waiter_and_is_not_cached(accounts):
    gate = threading.Event()
    calls = []

    def fail_first(profile: Profile) -> None:
        calls.append(profile.name)
        if len(calls) == 1:
            gate.wait(GATE_S)
            raise AuthError("the keyring said no", hint="unlock it")

    BlockingProvider.hook = staticmethod(fail_first)
    prof = accounts.profile("a")
    lock = accounts._lock = EnteringLock(accounts._lock)
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(accounts.provider, prof)
        wait_until(lambda: calls, "the first build started")
        second = pool.submit(accounts.provider, prof)
        wait_until(lambda: len(lock.threads) >= 2, "the second caller reached the accounts")
        gate.set()
        for f in (first, second):
            with pytest.raises(AuthError, match="the keyring said no"):
                f.result(timeout=WAIT_S)
    assert calls == ["a"]
    assert accounts.provider(prof).profile == prof  # the next call builds again, and succeeds
    assert calls == ["a", "a"]


def test_forget_during_a_build_keeps_its_result_out_of_the_cache(accounts):
    gate = threading.Event()
    BlockingProvider.hook = staticmethod(lambda profile: gate.wait(GATE_S))
    prof = accounts.profile("a")
    with ThreadPoolExecutor(1) as pool:
        stale = pool.submit(accounts.provider, prof)
        wait_until(lambda: BlockingProvider.built, "the build started")
        accounts.forget("a")  # e.g. new credentials were saved while the old ones were being read
        gate.set()
        old = stale.result(timeout=WAIT_S)
    fresh = accounts.provider(prof)
    assert fresh is not old and BlockingProvider.built == ["a", "a"]


def test_a_constructor_that_breaks_is_a_plugin_error(accounts):
    def boom(profile: Profile) -> None:
        raise RuntimeError("SDK missing a module")

    BlockingProvider.hook = staticmethod(boom)
    with pytest.raises(PluginError, match="failed to start: RuntimeError: SDK missing a module"):
        accounts.provider(accounts.profile("b"))


class OptionalSecretProvider(BlockingProvider):
    """A provider whose every credential field is optional (as AWS, Azure and Alibaba are)."""

    id = "optional"
    credential_fields = (CredentialField("key", "Key", optional=True),
                         CredentialField("secret", "Secret", secret=True, optional=True))
    seen: list[dict] = []

    def __init__(self, profile, secrets, context) -> None:
        super().__init__(profile, secrets, context)
        type(self).seen.append(dict(secrets))


class FailingCredentials(MemoryCredentials):
    """A keyring whose reads fail with ``error``."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    def get(self, provider: str, profile: str) -> dict[str, str]:
        raise self.error


def _optional_accounts(credentials) -> Accounts:
    entry = ProviderEntry("optional", "tests:OptionalSecretProvider", None, None, OptionalSecretProvider)
    acc = Accounts(Store.open(), entries={"optional": entry}, credentials=credentials)
    acc.save_profile(Profile("o", "optional", None))
    OptionalSecretProvider.seen = []
    BlockingProvider.built = []
    BlockingProvider.hook = staticmethod(lambda profile: None)
    return acc


@pytest.mark.parametrize("error", [AuthError("could not open the keyring to read credentials for optional/o"),
                                   AuthError("the keyring is locked; could not read credentials")],
                         ids=["did-not-answer", "locked"])
def test_a_keyring_that_fails_is_an_error_even_for_optional_fields(tmp_path, monkeypatch, error):
    # Issue 28: such a failure was taken for "nothing stored", so Azure said "no client secret stored"
    # for a secret that was there, and AWS would have fallen back to ambient credentials.
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    acc = _optional_accounts(FailingCredentials(error))
    try:
        with pytest.raises(AuthError) as raised:
            acc.provider(acc.profile("o"))
        assert raised.value is error
        assert OptionalSecretProvider.seen == []
    finally:
        acc.store.close()


def test_no_keyring_at_all_leaves_optional_fields_empty(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    acc = _optional_accounts(FailingCredentials(NoKeyringError("no secure keyring is available")))
    try:
        assert acc.provider(acc.profile("o")).profile.name == "o"
        assert OptionalSecretProvider.seen == [{}]
    finally:
        acc.store.close()
