"""`workbench cost`, `plan`, `budget`, `currency`, `watch` and `keep` through the real CLI."""

from __future__ import annotations

import csv
import io
import json

import psutil
import pytest

from wbcli import FIXTURE_PLUGINS, needs_secret_service

CREDS = json.dumps({"account": "acct-1", "token": "tok-3f9a8b7c-do-not-print"})


def _local_priced(wb, name="local", price="3.6"):
    assert wb("profiles", "add", "local", name, "--set", f"price_per_hour={price}").rc == 0


def _launch_in_process(wb, monkeypatch, profile: str, spec_text: str) -> str:
    """Launch on the fake cloud through the core API (the CLI's launch also starts the job over SSH,
    which a fake cloud machine cannot answer); the CLI then finds it through the same store and keyring."""
    import importlib

    from workbench.core.providers.accounts import Accounts
    from workbench.core.domain.jobspec import parse_spec
    from workbench.core.lifecycle.launcher import execute, choose_offer
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store

    monkeypatch.setenv("WORKBENCH_HOME", str(wb.home))
    monkeypatch.syspath_prepend(str(FIXTURE_PLUGINS))
    importlib.invalidate_caches()
    with Store.open() as store:
        acc = Accounts(store, entries=discover())
        lp = choose_offer(acc, parse_spec(spec_text), profile=profile)
        execute(acc, lp)
    return lp.launch_id


def _launch(wb, spec, *args):
    r = wb("launch", str(spec), "--yes", "--json", *args)
    assert r.rc == 0, r.err
    return r.json["launch"]["launch_id"], r.json["instances"][0]


def test_cost_budget_and_currency_on_a_priced_local_job(wb):
    _local_priced(wb)
    lid, inst = _launch(wb, wb.spec("paid", "sleep 120", "  budget_usd: 50\n"), "--profile", "local")
    r = wb("budget", "--monthly", "500", "--json")
    assert r.rc == 0 and {b["scope"] for b in r.json["budgets"]} == {"monthly", f"launch:{lid}"}
    r = wb("cost", "--json")
    assert r.rc == 0, r.err
    [row] = r.json["rows"]
    assert row["launch"] == lid and row["where"] == "local/local" and row["status"] == "running"
    assert 0 < row["estimate"] < 3.6 / 60  # well under a minute at $3.60/h
    assert row["budget"] == 50 and row["projected"] == pytest.approx(3.6 / 6, rel=0.05)  # 10 min max runtime
    assert r.json["totals"]["burn_rate_per_hour"] == pytest.approx(3.6)
    assert r.json["currency"] == "USD" and r.json["totals"]["actual"] is None
    by_provider = wb("cost", "--by", "provider", "--csv", "--offline")
    rows = list(csv.DictReader(io.StringIO(by_provider.out)))
    assert [x["provider"] for x in rows] == ["local/local"] and rows[0]["currency"] == "USD"
    assert wb("currency", "CNY").rc == 1  # no rate: refused rather than invented
    assert wb("currency", "CNY", "--rate", "7.2").rc == 0
    r = wb("cost", "--by", "day", "--offline")
    assert r.rc == 0 and "¥" in r.out and "converted at your rate of 7.2 CNY per USD" in r.out
    assert wb("cost", "--since", "yesterday").rc == 1
    assert wb("down", lid, "--yes").rc == 0


def test_watch_once_tears_down_at_max_runtime_and_keep_is_checked(wb):
    lid, inst = _launch(wb, wb.spec("guarded", "sleep 300"), "--provider", "local")
    created = wb("status", "--json").json["launches"][0]["created_at"]
    r = wb("watch", "--once", "--json", "--now", repr(created + 599))
    assert r.rc == 0 and r.out.strip() == ""
    r = wb("watch", "--once", "--json", "--now", repr(created + 600))
    assert r.rc == 0, r.err
    events = [json.loads(line) for line in r.out.splitlines()]
    assert [(e["guard"], e["action"]) for e in events] == [("max_runtime", "teardown"), ("max_runtime", "verified")]
    pid = inst["extra"]["pid"]
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert wb("status", "--json").json["billable"] == 0
    assert wb("keep", "no-such-launch").rc == 1
    r = wb("keep", lid, "--json")
    assert r.rc == 0 and r.json["kept"] is True


def test_plan_rejects_bad_input(wb):
    assert wb("plan", "--gpu", "V1OO:8", "--hours", "2160").rc == 1
    assert wb("plan", "--gpu", "V100:8", "--hours", "0").rc == 2
    assert wb("plan", "--gpu", "V100:8", "--hours", "10", "--buy-price", "-1").rc == 1


@needs_secret_service
def test_plan_compares_terms_across_regions_and_buying(wb):
    assert wb("profiles", "add", "fakecloud", "fc").rc == 0
    assert wb("credentials", "set", "fakecloud", "fc", "--stdin", stdin=CREDS).rc == 0
    r = wb("plan", "--gpu", "V100:8", "--hours", "2160", "--json", "--all", "--buy-price", "30000",
           "--power-kw", "3.5", "--kwh-price", "0.15", "--upkeep", "2000")
    assert r.rc == 0, r.err
    fake = {(x["option"], x["region"], x["instance_type"]): x["total"] for x in r.json["rows"]
            if x["provider"] == "fakecloud"}
    assert fake[("on-demand", "fake-east", "fk.v100x4")] == 52876.8  # 12.24 × 2 × 2160
    assert fake[("spot", "fake-west", "fk.v100x4")] == 15854.4
    assert fake[("reserved-1y", "fake-east", "fk.v100x1")] == 133152.0  # a whole year of 8 machines
    assert fake[("reserved-3y", "fake-west", "fk.v100x4")] == 257544.0
    [buy] = [x for x in r.json["rows"] if x["option"] == "buy"]
    assert buy["total"] == 31627.15
    assert r.json["break_even_hours_vs_on_demand"] > 0
    table = wb("plan", "--gpu", "V100:8", "--hours", "2160")
    assert "reserved-3y" in table.out and "fakecloud" in table.out and "--buy-price" in table.out


@needs_secret_service
def test_cost_shows_billed_cost_beside_the_estimate(wb, monkeypatch):
    assert wb("profiles", "add", "fakecloud", "fcb", "--set", "actual_factor=1.25").rc == 0
    assert wb("credentials", "set", "fakecloud", "fcb", "--stdin", stdin=CREDS).rc == 0
    lid = _launch_in_process(wb, monkeypatch, "fcb", "name: billed\nrun: python train.py\nresources:\n  gpu: V100:1\n")
    r = wb("cost", "--json")
    assert r.rc == 0, r.err
    [row] = [x for x in r.json["rows"] if x["launch"] == lid]
    assert row["actual"] is not None and row["actual_source"] == "Fake Cloud billing"
    assert row["difference"] == pytest.approx(row["actual"] - row["estimate"], abs=1e-3)
    text = wb("cost", "--offline")
    assert "ACTUAL" in text.out and "DIFF" in text.out
    assert wb("down", lid, "--yes").rc == 0
