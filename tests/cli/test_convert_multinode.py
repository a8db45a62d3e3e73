"""A real 2-node SkyPilot example file runs on this computer: two Local "nodes", each prints its line."""

from __future__ import annotations

from wbcli import ROOT

SKY = ROOT / "tests" / "fixtures" / "importers" / "skypilot"


def test_a_two_node_skypilot_file_runs_on_two_local_nodes(wb):
    r = wb("launch", str(SKY / "multi_hostname.yaml"), "--provider", "local", "--yes", "--json")
    assert r.rc == 0, r.err
    assert r.json["launch"]["num_nodes"] == 2
    lid = r.json["launch"]["launch_id"]
    logs = wb("logs", lid, "--follow", "--interval", "0.2", timeout=60)  # the head's, to its end
    assert logs.rc == 0 and "My hostname: " in logs.out, logs.err
    entry = next(x for x in wb("status", "--json").json["launches"] if x["launch_id"] == lid)
    assert entry["status"] == "finished" and len(entry["instances"]) == 2
    assert all(i["exit_code"] == 0 for i in entry["instances"])
    # every node ran `run` once: one line in each node's log
    lines = [line for p in wb.home.rglob("*.log") if lid in str(p)
             for line in p.read_text().splitlines() if line.startswith("My hostname: ")]
    assert len(lines) == 2, lines
