"""Upload of the workdir: ignore rules, size known first, progress, links that leave the folder."""

from __future__ import annotations

import os

from workbench.core.remote.connection import Target, connect
from workbench.core.remote.ignore import IgnoreRules, parse_rules
from workbench.core.remote.transfer import download, plan_upload, upload

from .helpers import launch, make_spec


def _rules(text: str) -> IgnoreRules:
    return IgnoreRules(parse_rules(text))


def test_gitignore_syntax():
    r = _rules("# comment\n*.pyc\n/build\ndata/\n!keep.pyc\nlogs/**/*.log\ndocs/*.md\n\\#hash\n[ab].tmp\n")
    assert r.ignored("x.pyc", False) and r.ignored("pkg/sub/y.pyc", False)
    assert not r.ignored("keep.pyc", False) and not r.ignored("pkg/keep.pyc", False)
    assert r.ignored("build", True) and not r.ignored("src/build", True)  # anchored
    assert r.ignored("data", True) and r.ignored("src/data", True) and not r.ignored("data", False)  # dirs only
    assert r.ignored("logs/a/b/c.log", False) and r.ignored("logs/c.log", False) and not r.ignored("c.log", False)
    assert r.ignored("docs/a.md", False) and not r.ignored("docs/sub/a.md", False)
    assert r.ignored("#hash", False) and r.ignored("a.tmp", False) and not r.ignored("c.tmp", False)
    assert r.ignored(".git", True)  # never uploaded


def _tree(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_plan_honours_both_ignore_files_and_sub_folders(tmp_path):
    root = tmp_path / "w"
    _tree(root, {
        ".gitignore": "*.ckpt\ndata/\n__pycache__/\n",
        ".workbenchignore": "!data/\nsecrets.env\n",  # brings data/ back for the job, drops a secret
        "train.py": "print(1)\n", "model.ckpt": "x" * 1000, "secrets.env": "TOKEN=1",
        "data/train.csv": "a,b\n", "__pycache__/m.pyc": "..", "pkg/.gitignore": "local.txt\n",
        "pkg/local.txt": "no", "pkg/mod.py": "pass\n", ".git/config": "[core]",
    })
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    os.symlink("/etc", root / "outside")  # a link leaving the workdir is not followed
    plan = plan_upload(root)
    assert [f for f, _, _ in plan.files] == [".gitignore", ".workbenchignore", "data/train.csv", "pkg/.gitignore",
                                              "pkg/mod.py", "run.sh", "train.py"]
    assert plan.total_bytes == sum((root / f).stat().st_size for f, _, _ in plan.files)
    assert dict((f, x) for f, _, x in plan.files)["run.sh"] is True
    assert plan.dirs == ("data", "pkg") and plan.skipped == 6  # .git, __pycache__, ckpt, secret, local, link


def test_upload_over_sftp_reports_size_first_and_progress(remote, tmp_path):
    files = {"train.py": "print('hi')\n", "big.bin": "z" * 300_000, "sub/deep/x.txt": "x\n", "skip.log": "no",
             ".gitignore": "*.log\n"}
    spec = make_spec(tmp_path, "true", on_finish="keep", files=files)
    inst = launch(remote.accounts, spec)
    plan = plan_upload(spec.workdir)
    seen: list[tuple[int, int, str]] = []
    dest = remote.server.remote_dir / "upload-test"
    with connect(Target.for_instance(inst, remote.data_dir)) as conn:
        sent = upload(conn, plan, str(dest), lambda d, t, p: seen.append((d, t, p)))
        assert seen[0] == (0, plan.total_bytes, "")  # the total is known before the first byte
        assert sent == plan.total_bytes == seen[-1][0]
        assert [d for d, _, _ in seen] == sorted(d for d, _, _ in seen)  # progress only goes forward
        assert len(seen) > len(plan.files) + 1  # the big file reported progress within itself
        assert (dest / "big.bin").read_text() == "z" * 300_000 and (dest / "sub/deep/x.txt").read_text() == "x\n"
        assert not (dest / "skip.log").exists()
        got = download(conn, str(dest / "sub"), tmp_path / "back")
        assert got.files == ["sub/deep/x.txt"] and (tmp_path / "back/sub/deep/x.txt").read_text() == "x\n"


def test_upload_goes_on_after_sshd_is_killed_and_restarted_mid_upload(remote, tmp_path):
    """Issue 30: the machine's sshd dies a third of the way into the upload and comes back 1.5 s later.
    The launch connects again with backoff (as `logs --follow` does) and sends only what was not there
    yet; before, it failed with kind connection_lost and the machine billed with no job."""
    import threading
    import time

    from workbench.core import paths

    from .helpers import Events, job

    files = {f"shard-{n:02d}.bin": chr(65 + n % 26) * 400_000 for n in range(24)}  # 9.6 MB in 24 files
    spec = make_spec(tmp_path, "ls shard-*.bin | wc -l", on_finish="keep", files=files)
    inst = launch(remote.accounts, spec)
    events = Events()
    dropped: dict = {}
    server = remote.server

    def drop_once(ev) -> None:
        events(ev)
        total = int(ev.data.get("total") or 0)
        if ev.kind == "upload" and not dropped and total and int(ev.data.get("done", 0)) > total / 3:
            dropped["at"] = time.time()
            server.stop()  # every connection killed, nothing listening: the network is gone
            dropped["timer"] = threading.Timer(1.5, server._launch)  # and back 1.5 s later, on the same port
            dropped["timer"].start()

    j = job(remote.accounts, inst, spec, None)
    j.on_event = drop_once
    try:
        assert j.launch() is True
    finally:  # the session's sshd is shared: it is back whatever happened here
        timer = dropped.get("timer")
        if timer is not None:
            timer.join(10)
        if server.proc is None or server.proc.poll() is not None:
            server._launch()
    assert dropped, "the upload never reached a third: nothing was dropped"
    warnings = [e.message for e in events.of("warning")]
    assert any("connecting again" in m for m in warnings), warnings
    work = remote.server.remote_dir / "jobs" / inst.launch_id / "work"
    for name, text in files.items():  # every file whole on the machine
        assert (work / name).read_text() == text, name
    # the files that were complete before the drop were not sent again
    before = [n for n in files if (work / n).stat().st_mtime < dropped["at"]]
    assert 1 <= len(before) < len(files), before
    assert j.follow() == 0
    assert paths.job_log(inst.launch_id).read_text().strip() == "24"
