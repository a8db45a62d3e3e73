"""The one price-snapshot reader: the documented layout, older layouts, the user's cache merged in, writing."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from workbench.core.domain.errors import PluginError
from workbench.core.providers import price_snapshot as ps

HEADER = ",".join(ps.COLUMNS)


def _row(**over: str) -> str:
    values = dict(instance_type="ecs.gn6v-c8g1.16xlarge", gpu_model="V100", gpu_count="8", gpu_memory_gb="16",
                  vcpus="64", memory_gb="256", network_gbps="20", rdma="false", region="cn-beijing",
                  currency="CNY", on_demand="190.5", spot="40", reserved_1y="120", reserved_3y="80",
                  savings_plan_1y="", savings_plan_3y="", as_of="2026-01-05", source="Alibaba price page")
    values.update(over)
    return ",".join(values.get(c, "") for c in ps.COLUMNS)


def test_a_third_cloud_only_adds_a_csv(tmp_path, monkeypatch):
    """A new provider's file is found, read and offered without any code knowing the provider."""
    bundled = tmp_path / "resources" / "catalog"
    bundled.mkdir(parents=True)
    (bundled / "alibaba.csv").write_text("# Alibaba Cloud GPU shapes (test)\n" + HEADER + "\n" + _row() + "\n")
    monkeypatch.setattr(ps, "bundled_dir", lambda: bundled)
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    assert "alibaba" in ps.providers()
    snap = ps.load("alibaba")
    row = snap.find("cn-beijing", "ECS.GN6V-C8G1.16XLARGE")  # types compare without case
    assert row is not None and (row.currency, row.on_demand, row.reserved_3y, row.savings_plan_1y) == \
        ("CNY", 190.5, 80.0, None)
    offer = ps.offers("alibaba")[0]
    assert (offer.provider, offer.gpu_count, offer.prices.currency, offer.prices.source, offer.prices.as_of) == \
        ("alibaba", 8, "CNY", ps.BUNDLED_LABEL, "2026-01-05")
    assert offer.extra["price_list"] == "Alibaba price page"


def test_older_layouts_still_read(tmp_path):
    text = ("size,gpu_model,gpu_count,gpu_memory_gb,vcpus,memory_gb,efa,on_demand_usd,spot_usd,region,as_of\n"
            "p3.2xlarge,V100,1,16,8,61,true,3.06,0.9,us-east-1,2024-11-01\n")
    row = ps.parse(text, tmp_path / "x.csv").rows[0]
    assert (row.instance_type, row.rdma, row.on_demand, row.spot, row.currency, row.network_gbps) == \
        ("p3.2xlarge", True, 3.06, 0.9, "USD", None)
    cny = ps.parse("instance_type,gpu_count,vcpus,memory_gb,region,as_of,on_demand_cny\nx,1,8,32,r,2025-01-01,12\n",
                   tmp_path / "y.csv").rows[0]
    assert (cny.currency, cny.on_demand) == ("CNY", 12.0)


@pytest.mark.parametrize("text, words", [
    ("", "is empty"),
    ("instance_type,region\n", "lacks the column(s) gpu_count"),
    (HEADER + "\n" + _row(gpu_count="eight") + "\n", "x.csv:2"),
    ("# c\n" + HEADER + "\n" + _row() + ",extra\n", f"x.csv:3: expected {len(ps.COLUMNS)} values, found {len(ps.COLUMNS) + 1}"),
    (HEADER + "\n" + _row(region="") + "\n", "needs an instance_type and a region"),
])
def test_malformed_files_name_file_and_line(tmp_path, text, words):
    with pytest.raises(PluginError) as info:
        ps.parse(text, tmp_path / "x.csv")
    assert words in info.value.message


def test_the_users_refreshed_copy_wins_where_it_is_newer(tmp_path, monkeypatch):
    bundled = tmp_path / "catalog"
    bundled.mkdir()
    (bundled / "cloud.csv").write_text(HEADER + "\n" + _row(on_demand="10", as_of="2025-01-01") + "\n"
                                       + _row(instance_type="small", on_demand="1", as_of="2025-01-01") + "\n")
    monkeypatch.setattr(ps, "bundled_dir", lambda: bundled)
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    assert ps.load("cloud").find("cn-beijing", "small").origin == "bundled"
    fresh = ps.parse(HEADER + "\n" + _row(on_demand="12", as_of="2026-02-01") + "\n", "mem", "cloud").rows
    ps.write(ps.cache_path("cloud"), fresh, "refreshed by a test")
    assert ps.cache_path("cloud").read_text().startswith("# refreshed by a test\n" + HEADER)
    merged = ps.load("cloud")  # the cache is re-read because the file changed
    big, small = merged.find("cn-beijing", "ecs.gn6v-c8g1.16xlarge"), merged.find("cn-beijing", "small")
    assert (big.on_demand, big.origin, big.label, big.as_of) == (12.0, "cache", ps.CACHED_LABEL, "2026-02-01")
    assert (small.on_demand, small.origin) == (1.0, "bundled")
    ps.cache_path("cloud").write_text("not,a,snapshot\n")  # a broken cache never stops the app
    assert ps.load("cloud").find("cn-beijing", "ecs.gn6v-c8g1.16xlarge").on_demand == 10.0


def test_written_rows_read_back_the_same(tmp_path):
    rows = ps.parse(HEADER + "\n" + _row(network_gbps="", spot="15.06559") + "\n", "mem").rows
    back = ps.read(ps.write(tmp_path / "sub" / "c.csv", rows), "c").rows
    assert back == [r for r in rows]


def test_bundled_files_use_the_documented_layout():
    for provider in ("aws", "azure"):
        path = ps.bundled_path(provider)
        header = next(line for line in path.read_text().splitlines() if not line.startswith("#"))
        assert tuple(header.split(",")) == ps.COLUMNS, provider
        snap = ps.load(provider, path)
        assert snap.rows and all(r.as_of and r.source and r.currency for r in snap.rows), provider


def test_age_and_staleness():
    today = datetime.date(2026, 6, 1)
    assert ps.age_days("2026-03-01", today) == 92 and ps.is_stale("2026-03-01", today)
    assert not ps.is_stale("2026-03-04", today) and not ps.is_stale("", today)
    assert ps.age_days("2026-05-31T12:00:00Z", today) == 1 and ps.age_days("soon", today) is None


def test_a_missing_provider_says_how_to_get_prices(tmp_path, monkeypatch):
    monkeypatch.setattr(ps, "bundled_dir", lambda: Path(tmp_path))
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    with pytest.raises(PluginError) as info:
        ps.load("nowhere")
    assert "catalog update" in info.value.hint
