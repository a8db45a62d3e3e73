"""Storage mounts on a Slurm cluster (issue 35, "storage mounts where rclone exists"), for real: the `workbench` CLI in
subprocesses, a real sshd as the login node, the real Slurm of tests/support/slurm.py, moto S3 (server mode, in this
process) for the bucket, the real rclone.

The storage agent runs once on the batch job's first node around every node's run (plugins/workbench_slurm/mounts.py):
a `copy` mount is copied once into the job's folder on the file system the nodes share, a `sync` mount is saved to the
bucket after the last node ended.  The mounts' credentials (short-lived, minted through moto's STS) reach the batch
job in a 0600 file, never its environment, and are gone from the job folder when the job ended.  A login node without
rclone is refused before anything is queued; the profile's `rclone` setting names one off the PATH.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import boto3
import pytest

import aws_moto
from slurm import MARKER
from sshd import Sshd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from wbcli import Workbench, wait_for  # noqa: E402

pytestmark = pytest.mark.timeout(120)

KEY, SECRET = "AKIASLURMSTORAGE0001", "slurm/storage/secret/value"
V100 = "resources:\n  gpu: V100:1\nguards:\n  max_runtime: 10m\n"


def _login(cluster, root: Path, key: str, path: str | None = None) -> Sshd:
    """A login node in front of ``cluster`` (as SlurmCluster.login_node), its sessions' PATH ``path`` when given."""
    server = Sshd(root, env={"SLURM_CONF": str(cluster.conf), MARKER: str(cluster.root)})
    server._prepare()
    if path:  # sshd keeps the first of two PATHs on its SetEnv line: this one replaces the usual one
        usual = f"SetEnv PATH={server.bin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin "
        text = server.config.read_text()
        assert usual in text
        server.config.write_text(text.replace(usual, f"SetEnv PATH={server.bin}:{path} "))
    server._launch()
    try:
        (server.bin / "nvidia-smi").unlink()
        (server.bin / "nvidia-smi").symlink_to(cluster.bin / "nvidia-smi")
        server.authorize(key)
    except BaseException:
        server.stop()
        raise
    return server


def _without_rclone(folder: Path) -> str:
    """A PATH with every command of /usr/bin except rclone (a login node where rclone was never installed)."""
    folder.mkdir()
    for name in os.listdir("/usr/bin"):
        if name != "rclone":
            (folder / name).symlink_to(Path("/usr/bin") / name)
    return f"{folder}:/usr/sbin:/sbin"


@pytest.fixture
def s3():
    stack = aws_moto.start()
    stack.reset()
    client = boto3.client("s3", region_name="us-east-1", endpoint_url=stack.url, aws_access_key_id=KEY,
                          aws_secret_access_key=SECRET)
    client.create_bucket(Bucket="lab-data")
    client.put_object(Bucket="lab-data", Key="imagenet/a.txt", Body=b"dataset-line-from-the-bucket\n")
    client.put_object(Bucket="lab-data", Key="imagenet/sub/b.txt", Body=b"second-file\n")
    client.url, client.stack = stack.url, stack
    return client


@pytest.fixture
def cluster_home(tmp_path, slurm_cluster, s3):
    """make(path=None, settings=()): a CLI home with an AWS profile `moto` (the bucket's) and a Slurm profile `hpc`
    whose login node is a real sshd in front of the cluster (its sessions' PATH ``path`` when given)."""
    from workbench.core.providers.sshkeys import ensure_keypair

    started = []

    def make(path: str | None = None, settings: tuple[str, ...] = ()) -> Workbench:
        wb = Workbench(tmp_path / "home")
        wb.env = {k: v for k, v in wb.env.items() if not k.startswith("AWS_")}
        wb.env.update(AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET)  # the AWS default chain (moto)
        (wb.home / "data").mkdir(parents=True, exist_ok=True)
        login = _login(slurm_cluster, tmp_path / "login", ensure_keypair(wb.home / "data").public_openssh, path)
        started.append(login)
        r = wb("profiles", "add", "aws", "moto", "--region", "us-east-1", "--endpoint-url", s3.url,
               "--set", "retry_backoff_cap_s=0.02", "--set", "pricing=snapshot")
        assert r.rc == 0, r.err
        sets = ["host=127.0.0.1", f"port={login.port}", f"user={login.user}", "storage_uri=s3://lab-data/up",
                *settings]
        r = wb("profiles", "add", "slurm", "hpc", *[a for kv in sets for a in ("--set", kv)])
        assert r.rc == 0, r.err
        wb.login, wb.cluster = login, slurm_cluster
        return wb

    yield make
    for server in started:
        server.stop()


def _spec(wb: Workbench, name: str, body: str) -> Path:
    path = wb.home.parent / f"{name}.yaml"
    path.write_text(f"name: {name}\n{body}")
    return path


def _keys(s3, prefix: str) -> dict[str, bytes]:
    found = s3.list_objects_v2(Bucket="lab-data", Prefix=prefix).get("Contents", [])
    return {o["Key"]: s3.get_object(Bucket="lab-data", Key=o["Key"])["Body"].read() for o in found}


def _launch_id(r) -> str:
    return next(line.split()[-1] for line in r.out.splitlines() + r.err.splitlines() if "launch id:" in line)


def _ours(cluster) -> list[dict[str, str]]:
    return [j for j in cluster.queue() if j.get("NAME", "").startswith("wb-")]


def test_a_one_node_job_reads_a_copied_dataset_and_its_sync_mount_lands_in_the_bucket(cluster_home, s3, tmp_path):
    hpc = cluster_home()
    local = tmp_path / "notes"
    local.mkdir()
    (local / "c.txt").write_text("from-this-computer\n")
    spec = _spec(hpc, "stored", V100 + f"""\
storage:
  - {{path: data, source: s3://lab-data/imagenet}}
  - {{path: notes, source: {local}}}
  - {{path: out, source: s3://lab-data/runs/r1, mode: sync, interval: 1h}}
run: |
  cat data/a.txt data/sub/b.txt notes/c.txt
  echo "written on $SLURMD_NODENAME in job $SLURM_JOB_ID" > out/result.txt
  echo "credentials mode $(stat -c %a ../storage-credentials.json), in env: $(env | grep -c RCLONE_CONFIG_WB)"
""")
    r = hpc("run", str(spec), "--profile", "hpc", "--yes", "--interval", "0.3", env=hpc.env, timeout=100)
    assert "exit code: 0" in r.err, r.out + r.err
    assert "dataset-line-from-the-bucket" in r.out and "second-file" in r.out and "from-this-computer" in r.out
    assert "credentials mode 600, in env: 0" in r.out  # the agent's file reached the batch job; the job never sees it
    [(key, body)] = _keys(s3, "runs/r1/").items()
    assert key == "runs/r1/result.txt" and body.startswith(b"written on node") and b" in job " in body
    job = hpc.login.remote_dir / "jobs" / _launch_id(r)
    assert not (job / "storage-credentials.json").exists()  # gone when the job ended (the folder stays)
    config = (job / "storage.json").read_text()
    assert '"rclone": "/usr/bin/rclone"' in config and '"install_rclone": false' in config and SECRET not in config
    log = (job / "output.log").read_text()
    assert log.count(" copy s3://lab-data/imagenet -> data\n") == 1
    # minted for the longest STS allows (36 h), not the max runtime + 1 h: the job may wait in the queue for hours
    asked = [c.param("DurationSeconds") for c in s3.stack.faults.find("GetFederationToken")]
    assert len(asked) == 3 and set(asked) == {str(36 * 3600)}, asked


def test_a_two_node_jobs_sync_mount_gets_both_nodes_files(cluster_home, s3):
    hpc = cluster_home()
    spec = _spec(hpc, "pair", "num_nodes: 2\n" + V100 + """\
storage:
  - {path: data, source: s3://lab-data/imagenet}
  - {path: out, source: s3://lab-data/runs/pair, mode: sync, interval: 1h}
run: |
  echo "node $WORKBENCH_NODE_RANK of $NNODES read $(cat data/a.txt)" | tee "out/node-$WORKBENCH_NODE_RANK.txt"
""")
    r = hpc("run", str(spec), "--profile", "hpc", "--yes", "--interval", "0.3", env=hpc.env, timeout=100)
    assert "exit code: 0" in r.err, r.out + r.err
    assert _keys(s3, "runs/pair/") == {f"runs/pair/node-{n}.txt": f"node {n} of 2 read dataset-line-from-the-bucket\n"
                                       .encode() for n in (0, 1)}
    job = hpc.login.remote_dir / "jobs" / _launch_id(r)
    log = (job / "output.log").read_text()
    # copied once into the folder both nodes share, saved once after both ended
    assert log.count(" copy s3://lab-data/imagenet -> data\n") == 1 and log.count("job ended (exit 0): save out") == 1
    assert not (job / "storage-credentials.json").exists()


def test_a_login_node_without_rclone_is_refused_before_anything_is_queued(cluster_home, s3, tmp_path):
    hpc = cluster_home(path=_without_rclone(tmp_path / "usr-bin"))
    spec = _spec(hpc, "norclone", V100 + """\
storage:
  - {path: data, source: s3://lab-data/imagenet}
run: cat data/a.txt
""")
    r = hpc("launch", str(spec), "--profile", "hpc", "--yes", "--json", env=hpc.env, timeout=60)
    assert r.rc != 0
    assert "need rclone on the cluster, and the login node 127.0.0.1 has none on its PATH" in r.err, r.out + r.err
    assert "--set rclone=~/bin/rclone" in r.err and "Traceback" not in r.err
    assert not _ours(hpc.cluster) and not list((hpc.login.remote_dir / "jobs").glob("*"))
    # the profile's setting names an rclone off the PATH: the job (whose PATH has none either) uses it
    (hpc.login.home / "bin").mkdir()
    (hpc.login.home / "bin" / "rclone").symlink_to("/usr/bin/rclone")
    sets = ["host=127.0.0.1", f"port={hpc.login.port}", f"user={hpc.login.user}", "rclone=~/bin/rclone"]
    assert hpc("profiles", "add", "slurm", "hpc", *[a for kv in sets for a in ("--set", kv)]).rc == 0
    r = hpc("run", str(spec), "--profile", "hpc", "--yes", "--interval", "0.3", env=hpc.env, timeout=100)
    assert "exit code: 0" in r.err and "dataset-line-from-the-bucket" in r.out, r.out + r.err


def test_a_cancelled_jobs_sync_mount_is_saved_before_slurm_ends_it(cluster_home, s3):
    """`down` = scancel: Slurm sends SIGTERM to the batch job (then SIGKILL after KillWait, 2 s here): the agent
    stops the run, saves the sync mount, the batch script waits for that save and deletes the credentials.  A time
    limit ends a job the same way."""
    hpc = cluster_home()
    spec = _spec(hpc, "cancelled", V100 + """\
storage:
  - {path: out, source: s3://lab-data/runs/cut, mode: sync, interval: 1h}
run: |
  echo "step 7" > out/checkpoint.txt
  echo checkpoint-written
  sleep 300
""")
    r = hpc("launch", str(spec), "--profile", "hpc", "--yes", "--json", env=hpc.env, timeout=60)
    assert r.rc == 0, r.err
    lid = r.json["launch"]["launch_id"]
    job = hpc.login.remote_dir / "jobs" / lid
    wait_for(lambda: "checkpoint-written" in ((job / "output.log").read_text() if (job / "output.log").exists()
                                             else ""), timeout=30, interval=0.2)
    assert _keys(s3, "runs/cut/") == {}  # nothing saved yet (every hour)
    assert hpc("down", lid, "--yes", env=hpc.env, timeout=60).rc == 0
    assert not _ours(hpc.cluster)
    assert _keys(s3, "runs/cut/") == {"runs/cut/checkpoint.txt": b"step 7\n"}
    log = (job / "output.log").read_text()
    assert "Slurm is ending the job" in log and "save out -> s3://lab-data/runs/cut done" in log
    assert not (job / "storage-credentials.json").exists()
