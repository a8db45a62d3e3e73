"""Before a launch bills anything: storage mounts checked against moto S3 and Azurite (through the ARM
test server), each problem a clear error naming the mount, local folders uploaded to the profile's
bucket (and skipped the second time), transfer costs named when data crosses a region or a cloud."""

from __future__ import annotations

import dataclasses

import pytest

from workbench.core.domain.errors import ConfigError, NotFoundError
from workbench.core.domain.jobspec import parse_spec
from workbench.core.domain.models import Offer, Prices
from workbench.core.storage.checks import check_storage, upload_sources


def offer(provider="aws", region="us-east-1") -> Offer:
    return Offer(provider, region, "p3.2xlarge", "V100", 1, 16, 8, 61, Prices(on_demand=3.06))


def spec(tmp_path, mounts: str, disk: int = 100):
    return parse_spec(f"name: t\nrun: x\nresources: {{disk_gb: {disk}}}\nstorage:\n{mounts}", source="t.yaml",
                      base_dir=tmp_path)


def test_a_missing_bucket_or_an_empty_prefix_is_named_before_launch(cloud, tmp_path):
    with pytest.raises(NotFoundError) as missing:
        check_storage(cloud.accounts, spec(tmp_path, "  - {path: /data, source: s3://nope-bucket/x}\n"),
                      cloud.profile, offer())
    assert missing.value.message.startswith("storage[0] (s3://nope-bucket/x): the S3 bucket 'nope-bucket' does not")
    cloud.bucket("lab", files={"other/a": b"1"})
    with pytest.raises(ConfigError) as empty:
        check_storage(cloud.accounts, spec(tmp_path, "  - {path: /data, source: s3://lab/imagenet}\n"),
                      cloud.profile, offer())
    assert "nothing under this address to copy" in empty.value.message and "mode: sync" in empty.value.hint
    # a sync mount may start empty
    plan = check_storage(cloud.accounts, spec(tmp_path, "  - {path: ckpt, source: s3://lab/runs, mode: sync}\n"),
                         cloud.profile, offer())
    assert plan.mounts[0].bytes is None and plan.warnings == ()


def test_a_dataset_larger_than_the_disk_is_refused_before_launch(cloud, tmp_path):
    cloud.bucket("lab", files={"big/part-0": b"\0" * (101 * 1000 * 1000)})
    with pytest.raises(ConfigError) as big:
        check_storage(cloud.accounts, spec(tmp_path, "  - {path: /data, source: s3://lab/big}\n", disk=1),
                      cloud.profile, offer())
    assert "101.0 MB" in big.value.message and "1 GB disk" in big.value.message
    assert "raise resources.disk_gb" in big.value.hint
    ok = check_storage(cloud.accounts, spec(tmp_path, "  - {path: /data, source: s3://lab/big}\n", disk=100),
                       cloud.profile, offer())
    assert ok.copy_bytes == 101 * 1000 * 1000 and ok.mounts[0].objects == 1


def test_data_in_another_region_or_cloud_comes_with_its_transfer_cost(cloud, tmp_path):
    cloud.bucket("west-lab", region="us-west-2", files={"d/a": b"\0" * 2_000_000})
    s = spec(tmp_path, "  - {path: /data, source: s3://west-lab/d}\n")
    (same,) = check_storage(cloud.accounts, s, cloud.profile, offer(region="us-west-2")).mounts
    assert same.region == "us-west-2"
    assert check_storage(cloud.accounts, s, cloud.profile, offer(region="us-west-2")).warnings == ()
    (cross,) = check_storage(cloud.accounts, s, cloud.profile, offer(region="us-east-1")).warnings
    assert "s3://west-lab/d is in us-west-2" in cross and "USD 0.02/GB" in cross and "2.0 MB" in cross
    (other,) = check_storage(cloud.accounts, s, cloud.profile, offer("azure", "eastus")).warnings
    assert "bills data leaving it for another cloud" in other and "USD 0.09/GB" in other


def test_a_local_folder_goes_to_the_profile_bucket_first_and_only_once(cloud, tmp_path):
    data = tmp_path / "dataset"
    (data / "sub").mkdir(parents=True)
    (data / "a.txt").write_text("a")
    (data / "sub" / "b.txt").write_text("bb")
    s = spec(tmp_path, "  - {path: /data, source: ./dataset}\n")
    with pytest.raises(ConfigError) as unset:
        check_storage(cloud.accounts, s, cloud.profile, offer())
    assert "has no bucket to upload it to" in unset.value.message and "storage_uri=s3://" in unset.value.hint
    cloud.bucket("lab")
    prof = dataclasses.replace(cloud.profile, settings={**cloud.profile.settings, "storage_uri": "s3://lab/wb"})
    cloud.accounts.save_profile(prof)
    plan = check_storage(cloud.accounts, s, prof, offer())
    (m,) = plan.uploads
    assert m.upload_from == str(data) and m.uri.startswith("s3://lab/wb/workbench-uploads/dataset-") and m.bytes == 3
    uploaded, reports = upload_sources(cloud.accounts, s, plan)
    assert uploaded.storage[0].source == m.uri and reports[0].uploaded == 2
    prefix = m.uri.removeprefix("s3://lab/") + "/"
    assert cloud.keys("lab", prefix) == {prefix + "a.txt": b"a", prefix + "sub/b.txt": b"bb"}
    _, again = upload_sources(cloud.accounts, s, check_storage(cloud.accounts, s, prof, offer()))
    assert (again[0].uploaded, again[0].skipped) == (0, 2)


def test_on_this_computer_mounts_live_in_the_job_folder(cloud, tmp_path):
    local = cloud.accounts.profile("local")
    with pytest.raises(ConfigError) as absolute:
        check_storage(cloud.accounts, spec(tmp_path, "  - {path: /data, source: s3://lab/x, mode: sync}\n"), local,
                      offer("local", "local"))
    assert "on this computer a mount lives in the job's folder" in absolute.value.message
    assert "'data'" in absolute.value.hint


def test_azure_names_a_missing_container_or_account(cloud, azure, tmp_path):
    lab = cloud.accounts.profile("lab")
    with pytest.raises(NotFoundError) as container:
        check_storage(cloud.accounts, spec(tmp_path, f"  - {{path: /d, source: '{azure.uri('nothere')}'}}\n"), lab,
                      offer("azure", "eastus"))
    assert "the container 'nothere' does not exist in storage account 'devstoreaccount1'" in container.value.message
    with pytest.raises(NotFoundError) as account:
        check_storage(cloud.accounts, spec(tmp_path, "  - {path: /d, source: 'https://ghostacct.blob.core.windows.net/c"
                                                     "ont/x'}\n"), lab, offer("azure", "eastus"))
    assert "no storage account 'ghostacct'" in account.value.message
    azure.container("sets", {"x/a": b"12345"})
    plan = check_storage(cloud.accounts, spec(tmp_path, f"  - {{path: /d, source: '{azure.uri('sets', 'x')}'}}\n"),
                         lab, offer("azure", "eastus"))
    assert plan.mounts[0].region == "westeurope" and plan.copy_bytes == 5
    assert "between regions is billed" in plan.warnings[0]


def test_an_oss_mount_is_checked_through_the_alibaba_plugin(cloud, alibaba, tmp_path):
    """OSS through the Alibaba plugin (moto stands in for OSS's S3-compatible API, the Alibaba test server for STS)."""
    from workbench.core.storage.machine import SECRET_PREFIX, machine_setup

    s = spec(tmp_path, "  - {path: /data, source: oss://lab/d}\n  - {path: ckpt, source: oss://lab/runs, mode: sync}\n")
    with pytest.raises(NotFoundError) as missing:
        check_storage(cloud.accounts, s, alibaba.profile, offer("alibaba", "cn-shanghai"))
    assert missing.value.message.startswith("storage[0] (oss://lab/d): the OSS bucket 'lab' does not exist")
    alibaba.bucket("lab", "cn-shanghai", {"d/a": b"12345", "d/sub/b": b"678"})
    plan = check_storage(cloud.accounts, s, alibaba.profile, offer("alibaba", "cn-shanghai"))
    assert [m.region for m in plan.mounts] == ["cn-shanghai", "cn-shanghai"] and plan.copy_bytes == 8
    assert plan.mounts[0].profile == "ali" and plan.warnings == ()
    # from an AWS launch the same mount is still served by the Alibaba profile, and the crossing is named
    cross = check_storage(cloud.accounts, s, cloud.profile, offer()).warnings
    assert "oss://lab/d is in cn-shanghai" in cross[0] and "another cloud" in cross[0] and len(cross) == 2

    setup = machine_setup(cloud.accounts, parse_spec("name: t\nrun: x\nstorage:\n  - {path: /data, source: oss://lab/d}"
                                                     "\n", source="t.yaml"), "l-1", alibaba.profile, state_dir="/s")
    key = setup.secret_env[f"{SECRET_PREFIX}0_ACCESS_KEY_ID"]
    assert key.startswith("STS.") and alibaba.account.secret not in setup.secret_env.values()
    assert setup.config["mounts"][0]["remote"] == "wb0:lab/d" and setup.expires_at is not None
    assert alibaba.server.state.temp[key].policy["Statement"][1]["Action"] == ["oss:GetObject"]  # copy: read only


def test_the_launch_panel_s_bar_fills_as_a_local_folder_uploads(qtbot, cloud, tmp_path):
    """The wizard's upload step (prepare_launch_storage, as LaunchRun runs it) reports the share of bytes sent;
    the launch panel's bar shows it, then is busy again once the launch's own steps begin."""
    from PySide6.QtCore import QObject, Signal

    from workbench.core.lifecycle.launcher import STEP_RECORD, LaunchPlan
    from workbench.core.offers.query import RankedOffer
    from workbench.ui.launch.launch_review import LaunchProgressPanel
    from workbench.core.lifecycle.launch_storage import prepare_launch_storage
    from workbench.ui.launch.launch_run import upload_progress

    data = tmp_path / "dataset"
    data.mkdir()
    for i in range(6):
        (data / f"part-{i}.bin").write_bytes(bytes(100_000))
    cloud.bucket("lab")
    prof = dataclasses.replace(cloud.profile, settings={**cloud.profile.settings, "storage_uri": "s3://lab/wb"})
    cloud.accounts.save_profile(prof)
    s = spec(tmp_path, "  - {path: /data, source: ./dataset}\n")
    lp = LaunchPlan("t-upload", s, prof, RankedOffer(prof.name, offer(), 3.06), 0)
    panel = LaunchProgressPanel()
    qtbot.addWidget(panel)
    panel.begin("aws (moto)")
    assert panel.busy.maximum() == 0  # busy, no measure yet
    lines: list[str] = []
    seen: list[float] = []

    class Run(QObject):  # as LaunchRun: the transfer threads emit, the panel updates on the main thread
        upload_fraction = Signal(float)

    run = Run()
    run.upload_fraction.connect(panel.show_fraction)

    def fraction(f: float) -> None:
        seen.append(f)
        run.upload_fraction.emit(f)

    uploaded = prepare_launch_storage(cloud.accounts, lp, upload_progress(lines.append, fraction))
    assert uploaded.spec.storage[0].source.startswith("s3://lab/wb/workbench-uploads/dataset-")
    assert seen and seen == sorted(seen) and seen[-1] == 1.0 and all(0.0 <= f <= 1.0 for f in seen)
    qtbot.waitUntil(lambda: panel.busy.value() == 100, timeout=5_000)
    assert (panel.busy.maximum(), panel.busy.isTextVisible()) == (100, True)
    assert "100 %" in lines[-1] and "6 of 6 files" in lines[-1]
    panel.reached(STEP_RECORD)
    assert panel.busy.maximum() == 0 and not panel.busy.isTextVisible()
