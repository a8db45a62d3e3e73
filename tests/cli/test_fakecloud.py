"""A cloud plugin from outside the tree, driven through the CLI: offers, launch, leftovers, still-billing."""

from __future__ import annotations

import json

from wbcli import EXAMPLES, needs_secret_service

CREDS = json.dumps({"account": "acct-1", "token": "tok-3f9a8b7c-do-not-print"})


def _profile(wb, name, *settings):
    args = ["profiles", "add", "fakecloud", name]
    for s in settings:
        args += ["--set", s]
    assert wb(*args).rc == 0
    r = wb("credentials", "set", "fakecloud", name, "--stdin", stdin=CREDS)
    assert r.rc == 0, r.err


def test_offers_cheapest_first_with_source(wb):
    r = wb("offers", "--json")
    assert r.rc == 0
    offers = r.json["offers"]
    assert any(o["provider"] == "local" for o in offers)
    for o in offers:
        assert {"profile", "provider", "region", "instance_type", "gpu_model", "gpu_count", "gpu_memory_gb",
                "vcpus", "memory_gb", "network_gbps", "rdma", "prices", "price_per_hour", "available"} <= set(o)
        assert o["prices"]["source"] and o["prices"]["as_of"]
    # yuan (Alibaba's catalog rows) and dollars compared at the stated reference rate, as the table says
    prices = [o["price_per_hour"] / (7.2 if o["prices"]["currency"] == "CNY" else 1) for o in offers]
    assert prices == sorted(prices)


@needs_secret_service
def test_offer_filters(wb):
    _profile(wb, "fc-offers")
    r = wb("offers", "--gpu", "V100", "--provider", "fakecloud", "--json")
    got = r.json["offers"]
    assert got and all(o["gpu_model"] == "V100" for o in got)
    assert got[0]["instance_type"] == "fk.v100x1"
    r = wb("offers", "--gpu", "A100:8", "--spot", "--max-price", "10", "--json")
    offers = r.json["offers"]  # the account's, and the catalog's spot prices of the other clouds
    assert offers and all(o["spot"] and o["price_per_hour"] <= 10 for o in offers)
    assert [o["price_per_hour"] for o in offers if o["provider"] == "fakecloud"] == [9.83, 9.83]
    r = wb("offers", "--gpu", "A100:8", "--region", "fake-west")
    assert "fake-west" in r.out and "fake-east" not in r.out and "fake price list" in r.out


@needs_secret_service
def test_credentials_round_trip_and_check(wb):
    _profile(wb, "fc-creds")
    r = wb("credentials", "check", "fakecloud", "fc-creds", "--json")
    assert r.rc == 0 and r.json == {"ok": True, "account": "acct-1", "principal": "user@fc-creds"}
    bad = wb("credentials", "set", "fakecloud", "fc-creds", "--stdin", stdin='{"account": "a", "token": "bad"}')
    assert bad.rc == 0
    r = wb("credentials", "check", "fakecloud", "fc-creds")
    assert r.rc == 3 and "rejected the token" in r.err
    r = wb("credentials", "delete", "fakecloud", "fc-creds", "--json")
    assert r.json == {"deleted": True}
    r = wb("credentials", "check", "fakecloud", "fc-creds")
    assert r.rc == 3 and "no credentials stored" in r.err and "credentials set" in r.err


@needs_secret_service
def test_leaked_disk_is_swept_and_verified(wb):
    _profile(wb, "fc-leaky", "leak_disk=true")
    r = wb("launch", str(EXAMPLES / "v100-single.yaml"), "--profile", "fc-leaky", "--yes", "--json")
    assert r.rc == 0, r.err
    lid = r.json["launch"]["launch_id"]
    assert r.json["launch"]["instance_type"] == "fk.v100x1" and r.json["launch"]["price_per_hour"] == 3.06
    assert r.json["launch"]["projected_cost"] == 3.06 * 2  # 2 h max runtime
    r = wb("down", lid, "--yes", "--json")
    assert r.rc == 0, r.out + r.err
    assert [d["kind"] for d in r.json["deleted"]] == ["disk"] and r.json["clean"]
    st = wb("status", "--json").json
    assert st["billable"] == 0 and st["launches"][0]["status"] == "terminated"


@needs_secret_service
def test_something_still_billing_exits_4(wb):
    _profile(wb, "fc-stuck", "stuck=true")
    r = wb("launch", str(EXAMPLES / "v100-single.yaml"), "--profile", "fc-stuck", "--yes", "--json")
    lid = r.json["launch"]["launch_id"]
    r = wb("down", "--all", "--yes", "--json", "--timeout", "1")
    assert r.rc == 4
    assert [x["instance_id"] for x in r.json["remaining"]] == [f"fk-{lid}-0"] and not r.json["clean"]
    human = wb("down", "--all", "--yes", "--timeout", "0.5")
    assert human.rc == 4 and "STILL BILLING" in human.err
    # unstick it so the fixture's teardown can clean up
    wb("profiles", "add", "fakecloud", "fc-stuck")
    assert wb("down", "--all", "--yes").rc == 0


@needs_secret_service
def test_capacity_failure_leaves_nothing(wb):
    _profile(wb, "fc-full", "fail_launch=capacity")
    r = wb("launch", str(EXAMPLES / "v100-single.yaml"), "--profile", "fc-full", "--yes", "--json")
    assert r.rc == 3 and r.json["error"]["kind"] == "capacity"
    st = wb("status", "--json").json
    assert st["launches"][0]["status"] == "failed" and st["billable"] == 0
    down = wb("down", "--all", "--yes", "--json").json
    assert down["deleted"] == [] and down["clean"]


@needs_secret_service
def test_secret_never_in_logs_or_files(wb):
    _profile(wb, "fc-secret")
    wb("credentials", "check", "fakecloud", "fc-secret", "-v")
    for f in wb.home.rglob("*"):
        if f.is_file():
            assert b"tok-3f9a8b7c-do-not-print" not in f.read_bytes(), f


@needs_secret_service
def test_corrupt_store_keeps_cloud_profiles_and_finds_machines(wb):
    _profile(wb, "fc-survivor")
    r = wb("launch", str(EXAMPLES / "v100-single.yaml"), "--profile", "fc-survivor", "--yes", "--json")
    lid = r.json["launch"]["launch_id"]
    db = wb.home / "data" / "state.sqlite3"
    for suffix in ("-wal", "-shm"):
        (wb.home / "data" / f"state.sqlite3{suffix}").unlink(missing_ok=True)
    db.write_bytes(b"garbage" * 1000)
    st = wb("status", "--json")
    assert st.rc == 0 and "moved aside" in st.err
    assert st.json["recovered"] == [lid] and st.json["billable"] == 1
    assert "fc-survivor" in wb("profiles").out
    assert wb("down", lid, "--yes").rc == 0


@needs_secret_service
def test_status_shows_leftovers_that_no_machine_uses(wb):
    """A launch that failed half-way left a disk: status lists it (JSON and text) until down --all deletes it."""
    _profile(wb, "fc-half", "leak_disk=true", "fail_launch=capacity")
    r = wb("launch", str(EXAMPLES / "v100-single.yaml"), "--profile", "fc-half", "--yes", "--json")
    assert r.rc != 0
    st = wb("status", "--json")
    assert [x["kind"] for x in st.json["leftovers"]] == ["disk"] and st.json["leftovers"][0]["profile"] == "fc-half"
    text = wb("status")
    assert "leftovers" in text.out and "disk" in text.out and "1 leftover(s)" in text.out
    assert wb("down", "--all", "--yes").rc == 0
    assert wb("status", "--json").json["leftovers"] == []


@needs_secret_service
def test_a_profile_that_cannot_be_checked_says_so_and_may_bill_only_where_we_launched(wb):
    assert wb("profiles", "add", "fakecloud", "fc-never").rc == 0  # no credentials, nothing launched
    r = wb("down", "--all", "--yes")
    assert r.rc == 3 and "cannot check fc-never: no credentials stored" in r.err
    assert "may still be billing" not in r.err
    _profile(wb, "fc-used")
    launched = wb("launch", str(EXAMPLES / "v100-single.yaml"), "--profile", "fc-used", "--yes", "--json")
    assert launched.rc == 0, launched.err
    assert wb("credentials", "delete", "fakecloud", "fc-used").rc == 0  # now it cannot be listed either
    st = wb("status", "--json")
    errors = {e["profile"]: e["may_bill"] for e in st.json["errors"]}
    assert errors == {"fc-never": False, "fc-used": True}
    r = wb("down", "--all", "--yes")
    assert "cannot check fc-used: " in r.err and "something this app launched there may still be billing" in r.err
    _profile(wb, "fc-used")  # credentials back: the fixture's teardown ends the machine
