"""What a job machine can hand us or read from us: download names that would escape (issue 30), env.sh modes.

The server here is a stand-in that lists hostile names (a real sshd cannot hold "a/b" in a folder): an
in-memory fake for this unit test; the real download path is tested over sshd in tests/remote.
"""

from __future__ import annotations

import stat
from pathlib import Path
from types import SimpleNamespace

from workbench.core.remote.transfer import download, safe_name


class HostileSftp:
    """A folder ``out`` whose listing holds a good file and names that try to escape."""

    NAMES = ["good.txt", "..", ".", "../escape.txt", "/etc/evil", "a/b.txt", "back\\slash"]

    def stat(self, path):
        return SimpleNamespace(st_mode=stat.S_IFDIR | 0o755, st_size=0)

    def listdir_attr(self, path):
        return [SimpleNamespace(filename=n, st_mode=stat.S_IFREG | 0o644, st_size=4) for n in self.NAMES]

    def get(self, remote, local, callback=None):
        Path(local).write_text("data")


def test_names_that_would_escape_are_refused_and_the_rest_fetched(tmp_path):
    conn = SimpleNamespace(sftp=lambda: HostileSftp(), target=SimpleNamespace(where="the machine"))
    dest = tmp_path / "outputs"
    dest.mkdir()
    result = download(conn, "/work/out", dest)
    assert result.files == ["out/good.txt"]
    assert sorted(result.refused) == sorted(f"out/{n}" for n in HostileSftp.NAMES[1:])
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["outputs/out/good.txt"]  # nothing beside or above the outputs folder


def test_a_symlink_planted_in_the_outputs_folder_is_not_followed(tmp_path):
    conn = SimpleNamespace(sftp=lambda: HostileSftp(), target=SimpleNamespace(where="the machine"))
    dest, elsewhere = tmp_path / "outputs", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (dest / "out").mkdir(parents=True)
    (dest / "out" / "good.txt").symlink_to(elsewhere / "target.txt")
    result = download(conn, "/work/out", dest)
    assert result.refused[-1] == "out/good.txt" and not (elsewhere / "target.txt").exists()


def test_safe_names():
    assert safe_name("model.pt") and safe_name("..hidden") and safe_name("a b")
    assert not any(safe_name(n) for n in ("", ".", "..", "a/b", "/x", "a\\b", "a\0b"))


class RecordingSftp:
    """Records what reaches the server, in order (chmods and the bytes written)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def chmod(self, path, mode):
        self.calls.append(("chmod", path, mode))

    def putfo(self, fileobj, path, confirm=True):
        self.calls.append(("write", path, fileobj.read()))

    def open(self, path, mode="r"):
        calls = self.calls

        class Handle:
            def __enter__(self):
                calls.append(("open", path, mode))
                return self

            def __exit__(self, *exc):
                return False

            def chmod(self, m):
                calls.append(("chmod", path, m))

            def write(self, data):
                calls.append(("write", path, data))

        return Handle()


def test_env_sh_is_private_before_its_secrets_are_written():
    # Issue 30: env.sh was written at the server's default 0644, closed, and only then chmod 0600
    from workbench.core.remote.supervisor import Scripts, install

    sftp = RecordingSftp()
    install(SimpleNamespace(sftp=lambda: sftp), "/j", Scripts({"env.sh": "TOKEN=s3cret\n", "run.sh": "echo\n"}))
    env = [c for c in sftp.calls if c[1] == "/j/env.sh"]
    assert env == [("open", "/j/env.sh", "w"), ("chmod", "/j/env.sh", 0o600), ("write", "/j/env.sh", b"TOKEN=s3cret\n")]
    assert sftp.calls[0] == ("chmod", "/j", 0o700)  # the job folder first: the job's user only
    assert ("chmod", "/j/run.sh", 0o755) in sftp.calls
