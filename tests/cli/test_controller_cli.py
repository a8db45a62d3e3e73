"""`workbench controller hand | release | away` through the real CLI: the JSON shapes docs/cli.md promises, a
launch with launch secrets refused, and what a controller wrote on the board shown once (the board a folder,
as when rehearsing on one computer; the cloud the file-backed fake one)."""

from __future__ import annotations

import json
import time

from wbcli import needs_secret_service

from workbench.core.controller.board import Board, FolderObjects

CREDS = '{"account": "acme"}'


def _setup(wb, tmp_path):
    board = tmp_path / "board"
    assert wb("profiles", "add", "fakecloud", "fc", "--set", f"state_dir={tmp_path / 'cloud'}",
              "--set", f"controller_board={board}").rc == 0
    assert wb("credentials", "set", "fakecloud", "fc", "--stdin", stdin=CREDS).rc == 0
    return board


@needs_secret_service
def test_hand_release_and_away(wb, tmp_path):
    board_dir = _setup(wb, tmp_path)
    spec = wb.spec("train", "sleep 60", "resources: {gpu: 'V100:1', spot: true}\n"
                   "recovery: {max_restarts: 1, on: [preemption]}\n")
    r = wb("launch", str(spec), "--profile", "fc", "--yes", "--json")
    assert r.rc == 0, r.err
    lid = r.json["launch"]["launch_id"]
    try:
        hand = wb("controller", "hand", lid, "--json")
        assert hand.rc == 0, hand.err
        assert hand.json == {"root_id": lid, "profile": "fc", "limits": []}
        install = json.loads(wb("controller", "away", "--json").out)["profiles"][0]
        assert install["profile"] == "fc" and install["handed"] == [lid] and not install["reachable"]
        assert install["took_over"]  # no controller answers: this computer relaunches it

        (record_dir,) = (board_dir / "workbench-controller").iterdir()
        board = Board(FolderObjects(record_dir))
        assert board.get(f"launches/{lid}.json")[0]["launch"]["launch_id"] == lid
        board.put("controller.json", {"ts": time.time(), "poll_s": 30, "launch_id": "workbench-controller-x"})
        board.add_event({"source": "controller", "action": "relaunched", "launch_id": lid, "level": "warning",
                         "message": "attempt 2 runs", "ts": time.time()})
        away = wb("controller", "away", "--json").json["profiles"][0]
        assert away["reachable"] and not away["took_over"]
        assert [e["action"] for e in away["events"]] == ["relaunched"]
        assert wb("controller", "away", "--json").json["profiles"][0]["events"] == []  # shown once

        rel = wb("controller", "release", lid, "--json")
        assert rel.rc == 0 and rel.json == {"root_id": lid, "released": True}
        assert board.get(f"released/{lid}.json") is not None
        assert wb("controller", "away", "--json").json == {"profiles": []}
    finally:
        wb("down", "--all", "--yes", "--timeout", "10")


@needs_secret_service
def test_a_launch_with_launch_secrets_is_not_handed_over(wb, tmp_path):
    _setup(wb, tmp_path)
    spec = wb.spec("secretive", "sleep 60", "resources: {gpu: 'V100:1'}\nsecrets: [HF_TOKEN]\n")
    r = wb("launch", str(spec), "--profile", "fc", "--yes", "--json", "--secret-env", "HF_TOKEN",
           env={**wb.env, "HF_TOKEN": "hf_x"})
    assert r.rc == 0, r.err
    lid = r.json["launch"]["launch_id"]
    try:
        hand = wb("controller", "hand", lid, "--json")
        assert hand.rc == 1
        err = hand.json
        assert err["error"]["kind"] == "config" and "HF_TOKEN" in err["error"]["message"]
    finally:
        wb("down", "--all", "--yes", "--timeout", "10")
