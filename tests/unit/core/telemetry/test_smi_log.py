"""Reading nvidia-smi --format=csv logs: units, [N/A], glued logs, missing columns, and the advisor over them."""

from __future__ import annotations

import math

import pytest

from workbench.core.domain.errors import ConfigError
from workbench.core.telemetry.advisor import advise, estimate_price
from workbench.core.telemetry.smi_log import DOCUMENTED, read_log, read_text

from advisor_fixtures import RECORDED, SYNTHETIC, offers, traces as T


def test_the_real_format_with_units_na_a_lost_gpu_and_a_repeated_header():
    tr = read_log(SYNTHETIC / "smi_units_na.csv")
    assert tr.clock == "log" and tr.missing == () and [g.index for g in tr.gpus] == [0, 1]
    g0, g1 = tr.gpus
    assert g0.name == "Tesla T4" and g0.model == "T4" and g0.mem_total == 15360.0
    assert list(g0.util) == [0.0, 41.0, 78.0, 80.0] and list(g0.mem_used) == [0.0, 1520.0, 6120.0, 6122.0]
    assert math.isnan(g0.power[0]) and math.isnan(g0.power[1]) and g0.power[2] == 35.12  # [N/A] is unknown, not 0
    assert math.isnan(g1.util[2]) and g1.util[3] == 79.0  # [Not Supported]
    assert math.isnan(g1.sm_clock[3]) and g1.sm_clock[0] == 300.0 and g0.power_limit[0] == 70.0
    assert g0.mem_util[2] == 31.0
    assert g0.t[1] - g0.t[0] == pytest.approx(1.005) and g0.t[3] - g0.t[0] > 290  # the second log, 5 min on
    assert tr.when(g0.t[0]) == "2025-11-03T09:15:01"  # the machine's own clock, no zone claimed


def test_a_log_with_fewer_columns_uses_them_and_names_the_others():
    text = ("timestamp, index, utilization.gpu [%], memory.used [MiB]\n"
            "2025/11/03 09:15:01.402, 0, 97 %, 14500 MiB\n2025/11/03 09:15:02.402, 0, 96 %, 14500 MiB\n")
    tr = read_text(text)
    assert tr.missing == ("name", "utilization.memory", "memory.total", "power.draw", "power.limit", "clocks.sm")
    assert list(tr.gpus[0].util) == [97.0, 96.0] and math.isnan(tr.gpus[0].mem_total)
    adv = advise(tr, offers())
    assert adv.missing == tr.missing and adv.advice == ()
    assert "memory.total" in adv.not_evaluated["batch_size"]


def test_nounits_and_headerless_logs():
    tr = T.fp32_busy(hours=0.05, period=1.0)
    plain = T.to_smi_csv(tr, units=False)
    a, b = read_text(plain), read_text(T.to_smi_csv(tr))
    assert list(a.gpus[0].util) == list(b.gpus[0].util) and list(a.gpus[0].power) == list(b.gpus[0].power)
    body = plain.split("\n", 1)[1]  # noheader: the documented columns in their order are still understood
    assert list(read_text(body).gpus[0].mem_used) == list(b.gpus[0].mem_used)
    with pytest.raises(ConfigError, match="no header"):
        read_text("2025/11/03 09:15:01.402, 0, 97 %\n")
    with pytest.raises(ConfigError, match="no GPU readings"):
        read_text("")
    with pytest.raises(ConfigError, match="not an nvidia-smi timestamp"):
        read_text("timestamp, index, utilization.gpu [%]\nyesterday, 0, 5 %\n")
    with pytest.raises(ConfigError, match="cannot read"):
        read_log(SYNTHETIC / "no-such-file.csv")
    assert len(DOCUMENTED) == 10


@pytest.mark.parametrize("make, rule", [(lambda: T.starved(cpu=30), "data_loading"), (T.fp32_busy, "mixed_precision"),
                                        (T.idle_six_of_eight, "idle_gpus"), (T.batch_small, "batch_size"),
                                        (T.oversized, "right_size"), (T.healthy, None)])
def test_the_advisor_says_the_same_from_the_log_as_from_the_trace(make, rule):
    """Written as nvidia-smi prints it (every 7th power reading [N/A]), read back, priced from the catalogue."""
    trace = make()
    log = read_text(T.to_smi_csv(trace, na_power_every=7))
    assert log.missing == () and len(log.gpus) == len(trace.gpus)
    priced = estimate_price(log, offers())
    assert priced.run.price_per_hour is not None and "bundled" in priced.run.price_source
    adv = advise(priced, offers())
    assert adv.ids() == ([rule] if rule else [])
    assert "spot" in adv.not_evaluated  # a log does not say whether the job checkpoints


def test_recorded_logs_if_any_parse_and_get_advice():
    """The place for logs recorded on a real GPU machine (none yet: see recorded/README.md)."""
    assert (RECORDED / "README.md").is_file()
    for path in sorted(RECORDED.glob("*.csv")):
        tr = read_log(path)
        assert tr.gpus and all(g.t.size for g in tr.gpus), path.name
        assert (path.with_suffix(".md")).is_file(), f"{path.name} needs its source beside it"
        adv = advise(estimate_price(tr, offers()), offers())
        assert all(a.saving.amount is None or a.saving.amount >= 0 for a in adv.advice)


def test_a_csv_of_another_tool_is_named_for_what_it_is():
    # Issue 29: a CSV with a header of its own read as "has no header line"
    from workbench.core.domain.errors import ConfigError
    from workbench.core.telemetry.smi_log import read_text

    with pytest.raises(ConfigError) as raised:
        read_text("time,cpu_percent,rss_mb\n2024-01-01 00:00:00,12,300\n", "cpu.csv")
    assert raised.value.message.startswith("cpu.csv is not an nvidia-smi log: its header names time, cpu_percent")
    assert "no header line" not in raised.value.message and "--query-gpu=timestamp" in raised.value.hint
    with pytest.raises(ConfigError, match="has no header line and 3 columns"):  # numbers without a header
        read_text("1,2,3\n", "bare.csv")
