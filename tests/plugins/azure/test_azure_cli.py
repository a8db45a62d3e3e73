"""The CLI contract: `workbench offers --gpu A100 --provider azure` lists ND96asr_v4 with a price.

The real `workbench` CLI runs in a subprocess against a throwaway WORKBENCH_HOME and
reaches the ARM test server (in this process) over HTTPS.  Without a keyring the
profile has no client secret: the offers then come from the bundled snapshot, priced
and marked "sign-in needed".  With the private Secret Service that `make test` starts,
the secret is stored in it and the offers are live (SKUs, quota, Retail Prices).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

from secret_service import HAS_SECRET_SERVICE


def _wb(home, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, WORKBENCH_HOME=str(home))
    if not HAS_SECRET_SERVICE:
        env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    return subprocess.run([sys.executable, "-m", "workbench", *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=60, stdin=None if stdin is not None else subprocess.DEVNULL)


def _add_profile(home, arm, account, name: str) -> None:
    sets = {"cloud": "custom", "arm_endpoint": arm.url, "authority_host": arm.url, "ca_bundle": arm.ca_file,
            "prices_url": arm.prices_url, "tenant_id": account.tenant, "client_id": account.client_id,
            "subscription_id": account.subscription, "regions": "eastus,westus2", "ssh_cidr": "203.0.113.7/32",
            "polling_interval": "0"}
    args = ["profiles", "add", "azure", name, "--region", "eastus"]
    for k, v in sets.items():
        args += ["--set", f"{k}={v}"]
    r = _wb(home, *args)
    assert r.returncode == 0, r.stderr


def test_offers_list_nd96asr_v4_with_a_price_from_the_snapshot_before_sign_in(tmp_path, arm, account):
    home = tmp_path / "home"
    _add_profile(home, arm, account, "az-offline")
    r = _wb(home, "offers", "--gpu", "A100", "--provider", "azure")
    assert r.returncode == 0, r.stderr
    row = next(line for line in r.stdout.splitlines() if "Standard_ND96asr_v4" in line and "eastus" in line)
    assert "$27.20" in row and "8× A100" in row and "snapshot (2025-06-01)" in row
    assert "sign-in needed" in row
    data = json.loads(_wb(home, "offers", "--gpu", "A100:8", "--provider", "azure", "--json").stdout)
    sizes = {(o["region"], o["instance_type"]) for o in data["offers"]}
    assert ("westus2", "Standard_ND96asr_v4") in sizes and all(o["gpu_count"] >= 8 for o in data["offers"])


@pytest.mark.keyring
def test_offers_are_live_once_the_secret_is_in_the_keyring(tmp_path, arm, account):
    home = tmp_path / "home"
    name = f"az-{uuid.uuid4().hex[:6]}"
    _add_profile(home, arm, account, name)
    r = _wb(home, "credentials", "set", "azure", name, "--stdin", stdin=json.dumps({"client_secret": account.secret}))
    assert r.returncode == 0, r.stderr
    try:
        r = _wb(home, "credentials", "check", "azure", name, "--json")
        assert r.returncode == 0 and json.loads(r.stdout)["account"] == account.subscription
        r = _wb(home, "offers", "--gpu", "A100", "--provider", "azure")
        assert r.returncode == 0, r.stderr
        row = next(line for line in r.stdout.splitlines() if "Standard_ND96asr_v4" in line and "eastus" in line)
        assert "$27.20" in row and "live: Azure Retail Prices API" in row and account.secret not in r.stdout
    finally:
        _wb(home, "credentials", "delete", "azure", name)
