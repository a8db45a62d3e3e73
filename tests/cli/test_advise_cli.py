"""`workbench advise` and `workbench report`, run as the real CLI in subprocesses."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from wbcli import ROOT

sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "advisor" / "synthetic"))
import advisor_traces as T  # noqa: E402  (synthetic traces, see that folder's README)

ADVICE_KEYS = {"id", "severity", "title", "evidence", "action", "saving"}


@pytest.fixture
def store_of(wb, monkeypatch):
    """The CLI's own store (under its WORKBENCH_HOME), opened in this process to write a finished launch."""
    from workbench.core.store.database import Store

    monkeypatch.setenv("WORKBENCH_HOME", str(wb.home))
    opened = []

    def open_store():
        s = Store.open()
        opened.append(s)
        return s

    yield open_store
    for s in opened:
        s.close()


def test_advise_a_log_json_shape(wb, tmp_path):
    log = tmp_path / "gpu.csv"
    log.write_text(T.to_smi_csv(T.idle_six_of_eight(hours=1.0, period=10.0), na_power_every=5))
    r = wb("advise", "--nvidia-smi-log", str(log), "--json")
    assert r.rc == 0, r.err
    d = r.json
    assert [a["id"] for a in d["advice"]] == ["idle_gpus"]
    (a,) = d["advice"]
    assert set(a) == ADVICE_KEYS and set(a["saving"]) == {"amount", "currency"}
    assert a["saving"]["currency"] == "USD" and a["saving"]["amount"] > 0
    assert a["evidence"]["window"]["start"] == "2026-01-01T00:00:00" and a["evidence"]["idle_gpus"][0] == "GPU 2"
    assert d["missing"] == [] and "spot" in d["not_evaluated"] and d["run"]["gpus"] == 8


def test_advise_a_log_with_the_price_paid_and_text_output(wb, tmp_path):
    log = tmp_path / "gpu.csv"
    log.write_text(T.to_smi_csv(T.fp32_busy(hours=1.0, period=10.0), units=False))
    r = wb("advise", "--nvidia-smi-log", str(log), "--gpu-model", "v100", "--price-per-hour", "4.5", "--json")
    assert r.rc == 0, r.err
    (a,) = r.json["advice"]
    assert a["id"] == "mixed_precision" and a["saving"]["amount"] == pytest.approx(4.5 / 3, abs=0.02)
    text = wb("advise", "--nvidia-smi-log", str(log), "--price-per-hour", "4.5")
    assert text.rc == 0 and "[high] Train in mixed precision — saves about $1.50" in text.out
    assert "torch.autocast" in text.out and "evidence 2026-01-01T00:00:00" in text.out


def test_advise_logs_of_two_machines_and_an_instance_type(wb, tmp_path):
    tr = T.idle_six_of_eight(hours=1.0, period=10.0)
    a, b = tmp_path / "node0.csv", tmp_path / "node1.csv"
    a.write_text(T.to_smi_csv(tr))
    b.write_text(T.to_smi_csv(tr))
    r = wb("advise", "--nvidia-smi-log", str(a), "--nvidia-smi-log", str(b), "--instance-type", "p3.16xlarge",
           "--checkpoints", "--json")
    assert r.rc == 0, r.err
    ids = [x["id"] for x in r.json["advice"]]
    assert set(ids) == {"idle_gpus", "spot"}
    idle = r.json["advice"][ids.index("idle_gpus")]
    assert idle["evidence"]["idle_gpus"][0] == "node0/GPU 2" and len(idle["evidence"]["idle_gpus"]) == 12
    assert idle["saving"]["amount"] == pytest.approx((24.48 - 12.24) * 2 * 1.0, abs=0.02)


def test_advise_and_report_a_launch_from_the_store(wb, store_of, tmp_path):
    st = store_of()
    T.to_store(st, T.two_nodes(), "L-cli", spec={"name": "ddp", "run": "x", "storage": [
        {"path": "ckpt", "source": "s3://b/ckpt", "mode": "sync", "interval_s": 300}]}, name="ddp")
    st.close()
    r = wb("advise", "L-cli", "--json")
    assert r.rc == 0, r.err
    assert [a["id"] for a in r.json["advice"]] == ["spot", "network"]
    assert r.json["run"]["cost"] == pytest.approx(97.92)
    out = tmp_path / "r.html"
    rep = wb("report", "L-cli", "-o", str(out), "--json")
    assert rep.rc == 0, rep.err
    assert rep.json["format"] == "html" and rep.json["cost"] == pytest.approx(97.92)
    page = out.read_text()
    assert "$97.92" in page and "i-node1 · GPU 7" in page and "The network limits training" in page
    pdf = tmp_path / "r.pdf"
    rp = wb("report", "L-cli", "--pdf", "-o", str(pdf), "--json", timeout=120)
    assert rp.rc == 0, rp.err
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page(?!s)", data)) == 1  # one page
    assert rp.json["pages"] == 1 and len(data) > 20_000  # text and two plots


def test_bad_input_is_a_clear_error(wb, tmp_path):
    r = wb("advise")
    assert r.rc == 1 and "give a LAUNCH_ID or --nvidia-smi-log" in r.err
    r = wb("advise", "nope", "--json")
    assert r.rc == 1 and r.json["error"]["kind"] == "not_found"
    r = wb("advise", "--nvidia-smi-log", str(tmp_path / "missing.csv"))
    assert r.rc == 1 and "cannot read" in r.err
    bad = tmp_path / "bad.csv"
    bad.write_text("hello, world\n")
    r = wb("advise", "--nvidia-smi-log", str(bad))
    assert r.rc == 1 and "bad.csv is not an nvidia-smi log: its header names hello, world" in r.err
    good = tmp_path / "gpu.csv"
    good.write_text(T.to_smi_csv(T.fp32_busy(hours=0.1, period=10.0)))
    r = wb("advise", "--nvidia-smi-log", str(good), "--gpu-model", "V1OO")
    assert r.rc == 1 and "did you mean V100" in r.err
    r = wb("advise", "--nvidia-smi-log", str(good), "--price-per-hour", "-3")
    assert r.rc == 2  # argparse: must be greater than 0
    r = wb("report", "nope")
    assert r.rc == 1 and "no launch 'nope'" in r.err
    assert not Path("workbench-report-nope.html").exists()


def test_help_names_every_flag_and_says_pdf_needs_qt(wb):
    r = wb("advise", "--help")
    for flag in ("--nvidia-smi-log", "--gpu-model", "--price-per-hour", "--instance-type", "--checkpoints", "--json"):
        assert flag in r.out
    r = wb("report", "--help")
    assert "--pdf" in r.out and "Qt" in r.out
