"""Fixtures for the reliability tests: the real CLI in subprocesses against moto and the ARM server.

- ``moto``: the session's moto server behind our fault wrapper (tests/support/aws_moto.py), reset
  around every test.
- ``arm`` / ``account``: the shared ARM-protocol server and a fresh tenant + subscription per test.
- ``wbhome``: a :class:`reltools.Home` (a throwaway WORKBENCH_HOME) that runs ``workbench`` subprocesses.

Helpers live in reltools.py (a plain module: ``from conftest import`` would be ambiguous across folders).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

import aws_moto
from reltools import Account, ArmServer, Home, shared_server


@pytest.fixture(scope="session")
def moto_server() -> aws_moto.MotoStack:
    return aws_moto.start()


@pytest.fixture
def moto(moto_server: aws_moto.MotoStack) -> Iterator[aws_moto.MotoStack]:
    moto_server.reset()
    yield moto_server
    moto_server.reset()


@pytest.fixture(scope="session")
def arm() -> ArmServer:
    return shared_server()


@pytest.fixture
def account(arm: ArmServer) -> Iterator[Account]:
    yield (acct := arm.new_account())
    arm.clear_faults(acct.subscription)


@pytest.fixture
def wbhome(tmp_path: Path) -> Iterator[Home]:
    home = Home(tmp_path / "home")
    yield home


