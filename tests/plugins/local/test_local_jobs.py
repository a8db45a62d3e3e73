"""Local jobs run for real: exit codes, logs, setup, workdir, environment, rollback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import psutil
import pytest

from workbench.core.domain.errors import ConfigError, WorkbenchError
from workbench.core.domain.models import InstanceState, JobSpec

from .helpers import LocalSetup, alive, wait_for


def test_exit_code_and_output_are_recorded(local: LocalSetup) -> None:
    provider = local.provider()
    spec = JobSpec(name="printer", run="echo line one; echo line two; echo to stderr >&2; exit 3")
    inst = local.launch(provider, spec)
    assert inst.state is InstanceState.RUNNING
    assert inst.instance_id == f"local-{inst.launch_id}" and inst.region == "local"
    assert inst.instance_type == "this-computer" and inst.name == "printer"

    done = local.wait_finished(provider, inst.launch_id)
    assert done.exit_code == 3
    assert done.extra["reason"] == "exited" and not done.state.billable
    log = local.log(inst.launch_id)
    assert "line one\nline two\n" in log and "to stderr" in log
    assert done.extra["log"] == str(local.data_dir / "jobs" / inst.launch_id / "output.log")
    # instances() reaped our finished child: no zombie is left behind
    assert not alive(inst.extra["pid"])
    with pytest.raises(ChildProcessError):
        os.waitpid(inst.extra["pid"], os.WNOHANG)


def test_job_json_records_the_launch(local: LocalSetup) -> None:
    provider = local.provider(price_per_hour="0.5")
    inst = local.launch(provider, JobSpec(name="rec", run="sleep 20"))
    record = json.loads((local.state_dir(inst.launch_id) / "job.json").read_text())
    assert record["launch_id"] == inst.launch_id and record["owner"] == local.install_id
    assert record["pid"] == record["pgid"] == inst.extra["pid"]
    assert record["create_time"] == pytest.approx(psutil.Process(record["pid"]).create_time(), abs=0.05)
    assert record["tags"]["workbench:launch"] == inst.launch_id
    assert record["spec_name"] == "rec" and record["price_per_hour"] == 0.5
    assert record["log"] == inst.extra["log"] and record["started_at"] > 0
    provider.terminate([inst])


def test_failed_setup_records_its_code_and_skips_run(local: LocalSetup) -> None:
    provider = local.provider()
    spec = JobSpec(name="bad-setup", setup="echo preparing; exit 4", run="echo RUN-STARTED; touch ran.txt")
    inst = local.launch(provider, spec)
    done = local.wait_finished(provider, inst.launch_id)
    assert done.exit_code == 4
    assert done.extra["phase"] == "setup" and done.extra["reason"] == "setup failed"
    log = local.log(inst.launch_id)
    assert "preparing" in log and "setup failed with exit code 4" in log
    assert "RUN-STARTED" not in log
    assert not (local.state_dir(inst.launch_id) / "work" / "ran.txt").exists()


def test_setup_then_run_share_the_working_directory(local: LocalSetup) -> None:
    provider = local.provider()
    spec = JobSpec(name="two-phase", setup="echo prepared > prep.txt", run="cat prep.txt")
    inst = local.launch(provider, spec)
    assert local.wait_finished(provider, inst.launch_id).exit_code == 0
    assert "prepared" in local.log(inst.launch_id)


def test_workdir_is_copied_without_vcs_caches_and_venvs(local: LocalSetup, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "data.txt").write_text("payload-42\n")
    (project / "pkg" / "mod.py").write_text("X = 1\n")
    for skipped in (".git", "__pycache__", ".venv"):
        (project / skipped).mkdir()
        (project / skipped / "junk").write_text("x")
    run = "cat data.txt && test -f pkg/mod.py && test ! -e .git && test ! -e __pycache__ && test ! -e .venv"
    provider = local.provider()
    inst = local.launch(provider, JobSpec(name="copy", run=run, workdir=str(project)))
    done = local.wait_finished(provider, inst.launch_id)
    assert "payload-42" in local.log(inst.launch_id)
    assert done.exit_code == 0, local.log(inst.launch_id)
    assert (project / ".git" / "junk").exists()  # the original is untouched


def test_spec_env_and_markers_reach_the_job(local: LocalSetup) -> None:
    provider = local.provider()
    run = 'echo "v=$MY_VAR m=$WORKBENCH_MANAGED o=$WORKBENCH_OWNER l=$WORKBENCH_LAUNCH_ID u=$PYTHONUNBUFFERED"'
    # a spec may not forge the markers: they are set last
    spec = JobSpec(name="env", run=run, env={"MY_VAR": "hello world", "WORKBENCH_OWNER": "forged"})
    inst = local.launch(provider, spec)
    local.wait_finished(provider, inst.launch_id)
    log = local.log(inst.launch_id)
    assert f"v=hello world m=true o={local.install_id} l={inst.launch_id} u=1" in log


def test_missing_workdir_rolls_back(local: LocalSetup, tmp_path: Path) -> None:
    provider = local.provider()
    spec = JobSpec(name="nowhere", run="sleep 20", workdir=str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="not a folder"):
        local.launch(provider, spec, launch_id="rollback-1")
    assert not local.state_dir("rollback-1").exists()
    assert provider.instances() == [] and provider.leftovers() == []


def test_unwritable_data_dir_raises_a_workbench_error(local: LocalSetup) -> None:
    local.data_dir.mkdir(parents=True)
    (local.data_dir / "local").write_text("a file where a folder should be")
    provider = local.provider()
    with pytest.raises(WorkbenchError, match="cannot prepare"):
        local.launch(provider, JobSpec(name="x", run="sleep 20"))
    assert provider.leftovers() == []


def test_launch_id_must_be_a_safe_file_name(local: LocalSetup) -> None:
    provider = local.provider()
    with pytest.raises(ConfigError):
        local.launch(provider, JobSpec(name="x", run="true"), launch_id="../escape")


def test_relaunch_returns_existing_job_without_spawning(local: LocalSetup) -> None:
    provider = local.provider()
    request = local.request(provider, JobSpec(name="once", run="echo started; sleep 20"))
    (first,) = provider.launch(request)
    (again,) = local.provider().launch(request)  # a second provider object (another app process)
    assert again.instance_id == first.instance_id and again.extra["pid"] == first.extra["pid"]
    wait_for(lambda: "started" in local.log(request.launch_id), "the job's first line")
    assert local.log(request.launch_id).count("started") == 1
    provider.terminate([first])


def test_stale_half_launch_is_cleared_before_relaunch(local: LocalSetup) -> None:
    provider = local.provider()
    stale = local.state_dir("stale-1") / "work"
    stale.mkdir(parents=True)
    (stale / "old.txt").write_text("old")
    inst = local.launch(provider, JobSpec(name="fresh", run="ls"), launch_id="stale-1")
    local.wait_finished(provider, inst.launch_id)
    assert "old.txt" not in local.log(inst.launch_id)
