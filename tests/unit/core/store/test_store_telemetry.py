"""Schema 3: GPU samples gain power/clock/utilization-range columns, host samples get a table, and a
database written before (schema 2) still opens with its samples intact.  Schema 5: PCIe rx/tx columns;
schema 6: NVLink rx/tx columns."""

from __future__ import annotations

import math
from pathlib import Path

from workbench.core.domain.models import GpuSample, HostSample
from workbench.core.store import database as store_mod
from workbench.core.store import schema as schema_mod
from workbench.core.store.database import Store


def test_new_fields_round_trip_and_nan_is_unknown(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.sqlite3") as st:
        full = GpuSample("i-1", 60.0, 0, 50.0, 1000.0, 40960.0, "A100", power_w=210.5, power_limit_w=400.0,
                         sm_clock_mhz=1410.0, mem_util_percent=20.0, util_min=3.0, util_max=99.0)
        bare = GpuSample("i-1", 120.0, 0, 51.0, 1000.0, 40960.0, "A100")
        st.add_samples([full, bare])
        assert st.samples("i-1") == [full, bare]  # NaN reads back as math.nan: equal and hashable
        assert math.isnan(st.samples("i-1")[1].power_w)
        h = HostSample("i-1", 60.0, 97.5, 8, 2048.0, 65536.0, 1.2e9, 3.4e8, math.nan)
        st.add_host_samples([h, h])
        assert st.host_samples("i-1") == [h] and st.host_samples("i-1", since=61.0) == []


def test_a_schema_2_database_still_loads(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "old.sqlite3"
    monkeypatch.setattr(schema_mod, "MIGRATIONS", schema_mod.MIGRATIONS[:2])  # the list lives in schema.py
    with Store.open(db) as old:
        assert old.schema_version == 2
        old._live().execute("INSERT INTO samples (instance_id, ts, idx, util_percent, mem_used_mb, mem_total_mb,"
                            " name, kind) VALUES ('i-9', 60, 0, 77, 5000, 16384, 'V100', 'gpu')")
    monkeypatch.undo()
    with Store.open(db) as st:
        assert st.schema_version == store_mod.latest_version() >= 3
        (s,) = st.samples("i-9")
        assert (s.util_percent, s.mem_used_mb, s.name) == (77.0, 5000.0, "V100")
        assert all(math.isnan(v) for v in (s.power_w, s.power_limit_w, s.util_min, s.util_max))
        assert st.host_samples("i-9") == []


def test_schema_5_adds_pcie_and_a_schema_4_database_keeps_its_samples(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "old4.sqlite3"
    monkeypatch.setattr(schema_mod, "MIGRATIONS", schema_mod.MIGRATIONS[:4])
    with Store.open(db) as old:
        assert old.schema_version == 4
        old._live().execute("INSERT INTO samples (instance_id, ts, idx, util_percent, mem_used_mb, mem_total_mb,"
                            " name, kind, power_w) VALUES ('i-9', 60, 0, 77, 5000, 16384, 'V100', 'gpu', 250)")
    monkeypatch.undo()
    with Store.open(db) as st:
        assert st.schema_version == store_mod.latest_version() >= 5
        (s,) = st.samples("i-9")
        assert s.power_w == 250.0 and math.isnan(s.pcie_rx_mbps) and math.isnan(s.pcie_tx_mbps)
        st.add_samples([GpuSample("i-9", 120.0, 0, 70.0, 5000.0, 16384.0, "V100", pcie_rx_mbps=11200.5,
                                  pcie_tx_mbps=410.0)])
        assert (st.samples("i-9")[1].pcie_rx_mbps, st.samples("i-9")[1].pcie_tx_mbps) == (11200.5, 410.0)


def test_schema_6_adds_nvlink_and_a_schema_5_database_keeps_its_samples(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "old5.sqlite3"
    monkeypatch.setattr(schema_mod, "MIGRATIONS", schema_mod.MIGRATIONS[:5])
    with Store.open(db) as old:
        assert old.schema_version == 5
        old._live().execute("INSERT INTO samples (instance_id, ts, idx, util_percent, mem_used_mb, mem_total_mb,"
                            " name, kind, power_w, pcie_rx_mbps) VALUES ('i-9', 60, 0, 77, 5000, 81920, 'H100', 'gpu',"
                            " 500, 11200.5)")
    monkeypatch.undo()
    with Store.open(db) as st:
        assert st.schema_version == store_mod.latest_version() >= 6
        (s,) = st.samples("i-9")
        assert (s.power_w, s.pcie_rx_mbps) == (500.0, 11200.5)  # the old row, whole
        assert math.isnan(s.nvlink_rx_mbps) and math.isnan(s.nvlink_tx_mbps)
        st.add_samples([GpuSample("i-9", 120.0, 0, 70.0, 5000.0, 81920.0, "H100", nvlink_rx_mbps=123456.5,
                                  nvlink_tx_mbps=98765.25)])
        new = st.samples("i-9")[1]
        assert (new.nvlink_rx_mbps, new.nvlink_tx_mbps) == (123456.5, 98765.25) and math.isnan(new.pcie_rx_mbps)
