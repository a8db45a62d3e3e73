"""The machine side against Azurite with the real rclone and the real azure-storage-blob SDK: the
Azure plugin finds the storage account through ARM (the test server), reads its key there, and gives
the machine an expiring container SAS only; rclone copies the dataset in, syncs checkpoints out and
restores them on a resumed attempt."""

from __future__ import annotations

import sys
import urllib.parse

from agent_run import new_machine, wait_until

from workbench.core.domain.jobspec import parse_spec
from workbench.core.storage.machine import SECRET_PREFIX, machine_setup

import azurite as azurite_support

LID = "resume-az0001"


def test_azure_blob_copy_sync_and_resume_with_a_container_sas(cloud, azure, tmp_path):
    azure.container("datasets", {"cifar/a.bin": b"A" * 2048, "cifar/meta/labels.txt": b"cat\n"})
    azure.container("runs")
    spec = parse_spec(f"name: az\nrun: python3 train.py\nstorage:\n"
                      f"  - {{path: data, source: '{azure.uri('datasets', 'cifar')}', mode: copy}}\n"
                      f"  - {{path: checkpoints, source: '{azure.uri('runs', 'exp1')}', mode: sync, interval: 1s}}\n",
                      source="t.yaml")
    lab = cloud.accounts.profile("lab")

    def setup(name):
        return machine_setup(cloud.accounts, spec, LID, lab, state_dir=str(tmp_path / name / "state"),
                             on_this_computer=True, notice={"poll_s": 0.1})

    s1 = setup("m1")
    env = s1.secret_env
    assert env[f"{SECRET_PREFIX}0_TYPE"] == "azureblob"
    sas = urllib.parse.parse_qs(urllib.parse.urlsplit(env[f"{SECRET_PREFIX}0_SAS_URL"]).query)
    assert sas["sp"] == ["rl"] and "se" in sas  # copy: read + list, expiring
    sas_w = urllib.parse.parse_qs(urllib.parse.urlsplit(env[f"{SECRET_PREFIX}1_SAS_URL"]).query)
    assert set(sas_w["sp"][0]) == set("racwl")  # sync: + add, create, write; never delete
    assert azurite_support.KEY not in "".join(env.values())  # the account key stays on this computer
    listed = [s.path for s in azure.arm.seen if s.client_id == azure.account.client_id]
    assert any(p.lower().endswith("/listkeys") for p in listed)

    m = new_machine(tmp_path / "m1", s1)
    prep = m.agent("prepare")
    assert prep.returncode == 0, prep.stdout + prep.stderr
    assert (m.work / "data" / "a.bin").read_bytes() == b"A" * 2048
    assert (m.work / "data" / "meta" / "labels.txt").read_text() == "cat\n"
    proc = m.start([sys.executable, "train.py"], STEPS="8", STEP_SECONDS="0.25")
    wait_until(lambda: any(k.startswith("exp1/step-") for k in azure.blobs("runs", "exp1/")) and proc.poll() is None,
               20, "a checkpoint in the container during the run")
    assert proc.wait(60) == 0
    assert sorted(azure.blobs("runs", "exp1/")) == [f"exp1/step-{i:06d}.txt" for i in range(1, 9)]

    m2 = new_machine(tmp_path / "m2", setup("m2"))
    proc2 = m2.start([sys.executable, "train.py"], STEPS="9", STEP_SECONDS="0.05", WORKBENCH_RESUME="1",
                     WORKBENCH_ATTEMPT="2")
    assert proc2.wait(60) == 0
    out = m2.output()
    assert "resume: restore https://devstoreaccount1.blob.core.windows.net/runs/exp1 -> checkpoints" in out
    assert "attempt 2: resumed from checkpoint step 8" in out and "done: 9 steps" in out


def test_this_computer_lists_containers_and_uploads_a_folder_to_azurite(cloud, azure, tmp_path):
    """The laptop side of Azure Blob: containers of the profile's storage accounts, a resumable folder
    upload (unchanged files skipped the second time), and a probe that sees what arrived."""
    from workbench.core.domain.storage_uri import parse_storage_uri
    from workbench.core.storage.upload import upload_folder

    azure.container("uploads")
    prov = cloud.accounts.provider(cloud.accounts.profile("lab"))
    assert azure.uri("uploads") in prov.storage_buckets()
    folder = tmp_path / "dataset"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.bin").write_bytes(b"a" * 5000)
    (folder / "sub" / "b.txt").write_text("bee")
    uri = parse_storage_uri(azure.uri("uploads", "cifar"))
    first = upload_folder(prov, folder, uri, tmp_path / "records")
    assert (first.files, first.uploaded, first.skipped, first.bytes_uploaded) == (2, 2, 0, 5003)
    assert azure.blobs("uploads", "cifar/") == {"cifar/a.bin": b"a" * 5000, "cifar/sub/b.txt": b"bee"}
    again = upload_folder(prov, folder, uri, tmp_path / "records")
    assert (again.uploaded, again.skipped) == (0, 2)
    info = prov.storage_probe(uri)
    assert info.uri.bucket == "uploads" and info.region == azure.region  # the storage account's location
    listed = prov.storage_list(uri)  # relative to the prefix, with sizes
    assert {k: o.size for k, o in listed.items()} == {"a.bin": 5000, "sub/b.txt": 3}
