"""This computer as an offer, its telemetry, and leftover processes."""

from __future__ import annotations

import datetime
import getpass
import os
import socket
import subprocess

import psutil
import pytest

from workbench.core.domain.errors import ConfigError
from workbench.core.domain.models import JobSpec
from workbench_local import hardware
from workbench_local.provider import LocalProvider

from .helpers import LocalSetup, alive, wait_for


def test_identity_regions_and_metadata(local: LocalSetup) -> None:
    provider = local.provider()
    identity = provider.check_credentials()
    assert identity.account == socket.gethostname()
    assert identity.principal == getpass.getuser()
    assert [r.name for r in provider.regions()] == ["local"]
    assert LocalProvider.default_region() == "local"
    assert LocalProvider.id == "local" and LocalProvider.display_name == "This computer"
    assert LocalProvider.credential_fields == ()


def test_offer_describes_this_computer(local: LocalSetup) -> None:
    provider = local.provider(price_per_hour="0.25")
    (offer,) = provider.offers()
    assert offer.provider == "local" and offer.region == "local"
    assert offer.instance_type == "this-computer"
    assert offer.vcpus == psutil.cpu_count()
    assert offer.memory_gb == pytest.approx(psutil.virtual_memory().total / 1024**3, abs=0.1)
    gpus = hardware.probe_gpus()
    assert offer.gpu_count == len(gpus)
    if not gpus:  # the CI machine: CPU only
        assert offer.gpu_model is None and offer.gpu_memory_gb == 0.0
    assert offer.prices.on_demand == offer.prices.spot == 0.25
    assert offer.prices.currency == "USD" and offer.prices.source == "profile setting"
    assert offer.prices.as_of == datetime.date.today().isoformat()
    assert list(provider.offers("local")) == [offer]
    assert list(provider.offers("us-east-1")) == []


def test_price_defaults_to_zero(local: LocalSetup) -> None:
    (offer,) = local.provider().offers()
    assert offer.hourly() == 0.0


@pytest.mark.parametrize("bad", ["cheap", "-1", "nan", "inf", ""])
def test_invalid_price_is_a_config_error(local: LocalSetup, bad: str) -> None:
    with pytest.raises(ConfigError, match="price_per_hour"):
        list(local.provider(price_per_hour=bad).offers())


def test_invalid_grace_is_a_config_error(local: LocalSetup) -> None:
    provider = local.provider(grace_seconds="soon")
    inst = local.launch(provider, JobSpec(name="x", run="sleep 20"))
    with pytest.raises(ConfigError, match="grace_seconds"):
        provider.terminate([inst])


def test_samples_of_a_running_job(local: LocalSetup) -> None:
    provider = local.provider(grace_seconds="0.5")
    inst = local.launch(provider, JobSpec(name="busy", run="sleep 30"))
    gpus = hardware.probe_gpus()
    # on a busy machine the job's processes may not be found in the first instant: wait for a reading of them
    # (it failed once under load with 0 MB: the group was still starting)
    samples = wait_for(lambda: [s for s in provider.samples(inst) if gpus or s.mem_used_mb > 0] or None,
                       "a reading of the job's processes")
    if gpus:  # a computer with GPUs: one reading per GPU, from NVML
        assert [s.index for s in samples] == list(range(len(gpus)))
        assert all(s.kind == "gpu" and s.instance_id == inst.instance_id and s.mem_total_mb > 0 for s in samples)
        provider.terminate([inst])
        assert provider.samples(inst) == []
        return
    (sample,) = samples
    assert sample.kind == "cpu" and sample.index == 0 and sample.name == "CPU"
    assert sample.instance_id == inst.instance_id
    assert sample.mem_used_mb > 0
    assert sample.mem_total_mb == pytest.approx(psutil.virtual_memory().total / 1024**2, rel=0.01)
    assert 0.0 <= sample.util_percent <= 100.0
    assert provider.samples(inst)[0].kind == "cpu"  # a second reading reuses the cached processes
    provider.terminate([inst])
    assert provider.samples(inst) == []


def test_leftovers_are_marked_processes_without_a_live_job(local: LocalSetup) -> None:
    provider = local.provider(grace_seconds="1")
    inst = local.launch(provider, JobSpec(name="forgotten", run="sleep 30"))
    assert provider.leftovers() == []  # a running job is not a leftover
    job_pids = wait_for(
        lambda: [p.pid for p in psutil.Process(inst.extra["pid"]).children(recursive=True)] or None,
        "the job's children",
    )

    # The record is lost; the processes live on.  Only job.json goes: removing the whole folder raced
    # the wrapper, whose bash may not have opened run.sh yet (that was this test's old flake).
    (local.state_dir(inst.launch_id) / "job.json").unlink()
    assert provider.instances() == []
    found = provider.leftovers()
    assert {r.kind for r in found} == {"process"}
    assert {r.launch_id for r in found} == {inst.launch_id}
    assert str(inst.extra["pid"]) in {r.resource_id for r in found}
    assert all(r.region == "local" and r.provider == "local" for r in found)

    provider.delete(found)
    assert not alive(inst.extra["pid"]) and not any(alive(p) for p in job_pids)
    assert provider.leftovers() == []
    provider.delete(found)  # already gone: fine
    provider.delete([])


def test_a_stale_process_table_cache_does_not_hide_the_real_start_time(local: LocalSetup) -> None:
    """pid_max is often 32768, so pids are reused during a long session.  psutil.process_iter keeps
    a module-wide cache of Process objects with the start time read back then; a scan built on it
    reported that old start time for the new process, and delete() then refused to end it."""
    provider = local.provider(grace_seconds="1")
    markers = {"WORKBENCH_MANAGED": "true", "WORKBENCH_LAUNCH_ID": "reused-1", "WORKBENCH_OWNER": local.install_id}
    ours = subprocess.Popen(["sleep", "30"], env={**os.environ, **markers}, start_new_session=True)
    local.track(ours.pid)
    try:
        real_start = psutil.Process(ours.pid).create_time()
        list(psutil.process_iter())  # fill psutil's cache, then make its entry look like an older process
        cached = psutil._pmap.get(ours.pid)  # type: ignore[attr-defined]
        if cached is not None:
            cached._create_time = real_start - 100.0
        (found,) = provider.leftovers()
        assert abs(float(found.extra["create_time"]) - real_start) < 0.05
        provider.delete([found])
        assert ours.wait(timeout=5) is not None
    finally:
        ours.kill()
        ours.wait(timeout=5)


def test_orphan_with_our_markers_is_found_and_killed_others_are_not(local: LocalSetup) -> None:
    provider = local.provider(grace_seconds="1")
    markers = {"WORKBENCH_MANAGED": "true", "WORKBENCH_LAUNCH_ID": "orphan-9"}
    ours = subprocess.Popen(
        ["sleep", "30"], env={**os.environ, **markers, "WORKBENCH_OWNER": local.install_id}, start_new_session=True
    )
    theirs = subprocess.Popen(
        ["sleep", "30"], env={**os.environ, **markers, "WORKBENCH_OWNER": "another-install"}, start_new_session=True
    )
    local.track(ours.pid)
    local.track(theirs.pid)
    try:
        found = provider.leftovers()
        assert [(r.resource_id, r.launch_id) for r in found] == [(str(ours.pid), "orphan-9")]
        provider.delete(found)
        assert ours.wait(timeout=5) is not None
        assert alive(theirs.pid)
    finally:
        for proc in (ours, theirs):
            proc.kill()
            proc.wait(timeout=5)
