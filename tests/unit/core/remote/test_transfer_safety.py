"""What a job machine can hand us or read from us: download names that would escape (issue 30), env.sh modes.

The server here is a stand-in that lists hostile names (a real sshd cannot hold "a/b" in a folder): an
in-memory fake for this unit test; the real download path is tested over sshd in tests/remote.
"""

from __future__ import annotations

import stat
from pathlib import Path
from types import SimpleNamespace

import pytest

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


def test_env_sh_is_private_before_its_secrets_are_written():
    # Issue 30: env.sh was written at the server's default 0644, closed, and only then chmod 0600.  Now the scripts
    # travel as one tar on the command's stdin, unpacked under umask 077: no file is ever readable by others
    import io
    import tarfile

    from workbench.core.remote.connection import Result
    from workbench.core.remote.supervisor import Scripts, install

    runs = []

    def run(command, timeout=60.0, stdin=None):
        runs.append((command, stdin))
        return Result(0, "", "")

    install(SimpleNamespace(run=run, target=SimpleNamespace(where="m")), "/j",
            Scripts({"env.sh": "TOKEN=s3cret\n", "run.sh": "echo\n", "container.env": "PW=x\n"}))
    ((command, stdin),) = runs
    assert "s3cret" not in command  # a secret never on a command line
    before_tar = command.split("tar -x")[0]
    assert "chmod 700 /j" in before_tar and "umask 077" in before_tar  # the folder closed, files born private
    assert command.endswith("chmod 755 run.sh")  # only the scripts become executable, never env.sh
    with tarfile.open(fileobj=io.BytesIO(stdin)) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert set(members) == {"env.sh", "run.sh", "container.env"}
        assert all(m.mode == 0o600 and m.isreg() for m in members.values())
        assert tar.extractfile("env.sh").read() == b"TOKEN=s3cret\n"


def test_a_script_name_that_would_leave_the_job_folder_is_refused():
    from workbench.core.remote.supervisor import Scripts, install

    for bad in ("../x.sh", "a/b.sh", ".."):
        with pytest.raises(ValueError):
            install(SimpleNamespace(run=None), "/j", Scripts({bad: "x"}))


class FolderSftp:
    """SFTP's mkdir and stat on a folder of this computer, counting the requests (each a round trip)."""

    def __init__(self, root: Path) -> None:
        self.root, self.requests = root, []

    def _local(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def mkdir(self, path, mode=0o777):
        self.requests.append(("mkdir", path))
        self._local(path).mkdir()  # OSError (FileExistsError, FileNotFoundError) as SFTP's failure

    def stat(self, path):
        self.requests.append(("stat", path))
        st = self._local(path).stat()
        return SimpleNamespace(st_mode=st.st_mode, st_size=st.st_size)


def test_mkdirs_starts_from_the_deepest_missing_folder(tmp_path):
    from workbench.core.remote.transfer import _mkdirs

    (tmp_path / "home/u/.workbench/jobs").mkdir(parents=True)
    sftp = FolderSftp(tmp_path)
    _mkdirs(sftp, "/home/u/.workbench/jobs/L1/work")  # the job folder is new, its parent is there
    assert (tmp_path / "home/u/.workbench/jobs/L1/work").is_dir()
    assert [r[0] for r in sftp.requests] == ["mkdir", "stat", "mkdir", "mkdir"]  # not two a level (12 here)
    sftp.requests.clear()
    _mkdirs(sftp, "/home/u/.workbench/jobs/L1/work/")  # there already: a failed mkdir and a stat
    assert [r[0] for r in sftp.requests] == ["mkdir", "stat"]
    (tmp_path / "home/u/file").write_text("x")
    with pytest.raises(OSError):  # a file in the way is an error, as mkdir -p says
        _mkdirs(sftp, "/home/u/file/sub")
