"""The install's SSH key: made once, private half 0600, readable by OpenSSH tools."""

from __future__ import annotations

import stat
import subprocess

from workbench.core.providers.sshkeys import ensure_keypair


def test_key_is_made_once_with_private_permissions(tmp_path) -> None:
    first = ensure_keypair(tmp_path, comment="workbench-test")
    again = ensure_keypair(tmp_path)
    assert first == again
    assert first.public_openssh.startswith("ssh-ed25519 ") and first.public_openssh.endswith("workbench-test")
    assert stat.S_IMODE(first.private_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(first.private_path.parent.stat().st_mode) == 0o700
    assert first.fingerprint.startswith("SHA256:")


def test_lost_public_half_is_rebuilt_from_the_private_key(tmp_path) -> None:
    made = ensure_keypair(tmp_path)
    made.public_path.unlink()
    rebuilt = ensure_keypair(tmp_path)
    assert rebuilt.public_openssh.split()[:2] == made.public_openssh.split()[:2]


def test_openssh_reads_the_private_key(tmp_path) -> None:
    made = ensure_keypair(tmp_path)
    out = subprocess.run(["ssh-keygen", "-y", "-f", str(made.private_path)], capture_output=True, text=True, check=True)
    assert out.stdout.split()[:2] == made.public_openssh.split()[:2]
    listed = subprocess.run(["ssh-keygen", "-l", "-f", str(made.public_path)], capture_output=True, text=True, check=True)
    assert made.fingerprint in listed.stdout


def test_an_rsa_pair_for_clouds_that_import_rsa_keys_only(tmp_path) -> None:
    import paramiko

    from workbench.core.providers.sshkeys import keypair_for

    rsa = ensure_keypair(tmp_path, key_type="rsa")
    assert rsa.public_openssh.startswith("ssh-rsa ") and rsa.private_path.name == "id_rsa"
    assert (rsa.private_path.stat().st_mode & 0o777) == 0o600
    assert isinstance(paramiko.PKey.from_path(str(rsa.private_path)), paramiko.RSAKey)
    assert keypair_for(tmp_path, {"ssh_key_type": "rsa"}).private_path == rsa.private_path
    assert keypair_for(tmp_path, {}).private_path.name == "id_ed25519"  # the default pair is untouched
    assert ensure_keypair(tmp_path, key_type="rsa").public_openssh == rsa.public_openssh  # made once


def _make_key(folder: str, start, out) -> None:
    start.wait(30)
    try:
        out.put(ensure_keypair(__import__("pathlib").Path(folder)).public_openssh)
    except Exception as exc:  # noqa: BLE001 - reported to the test
        out.put(f"error: {exc}")


def test_processes_making_the_key_at_once_all_read_it_whole(tmp_path) -> None:
    # A crash test launched several processes on one fresh home: one read id_ed25519.pub while another
    # was writing it, and sent AWS an empty key (InvalidKeyPair.Format).  Six processes per fresh
    # folder, started together, twenty folders.
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    for n in range(20):
        folder = tmp_path / f"home{n}"
        start, out = ctx.Event(), ctx.Queue()
        procs = [ctx.Process(target=_make_key, args=(str(folder), start, out)) for _ in range(6)]
        for p in procs:
            p.start()
        start.set()
        keys = [out.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(30)
        assert len(set(keys)) == 1 and keys[0].startswith("ssh-ed25519 "), keys
