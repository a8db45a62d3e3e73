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
