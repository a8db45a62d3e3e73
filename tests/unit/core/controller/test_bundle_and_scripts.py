"""The controller's install: the wheel of the running app (no Qt interface, the plugins, the resources as data,
the console script and the provider entry points, every dependency pinned to the version this app runs with),
and its service scripts: a systemd unit that restarts on failure and starts at boot where systemd may be used,
else a loop that starts the service again when it fails and ends when it exits 0."""

from __future__ import annotations

import importlib.metadata as md
import os
import subprocess
import zipfile

from workbench.core.controller import bundle, deploy


def test_the_wheel_is_the_running_app_without_its_gui_and_pins_what_it_runs_with(tmp_path):
    wheel = bundle.build_wheel(tmp_path, ["aws"])
    names = zipfile.ZipFile(wheel).namelist()
    assert "workbench/cli/controller.py" in names and "workbench/core/controller/service.py" in names
    assert "workbench_aws/provider.py" in names and "workbench_local/provider.py" in names
    assert not [n for n in names if n.startswith("workbench/ui/") or n == "workbench/app.py"]
    data = f"cloud_gpu_workbench-{bundle.version()}.data/data/share/cloud-gpu-workbench/resources/"
    assert f"{data}guard/workbench_guard.py" in names and f"{data}storage/workbench_storage.py" in names
    assert any(n.startswith(f"{data}catalog/") and n.endswith(".csv") for n in names)
    info = f"cloud_gpu_workbench-{bundle.version()}.dist-info/"
    z = zipfile.ZipFile(wheel)
    meta = z.read(info + "METADATA").decode()
    assert f"Requires-Dist: boto3=={md.version('boto3')}" in meta
    assert f"Requires-Dist: PyYAML=={md.version('PyYAML')}" in meta
    assert "PySide6" not in meta and "pyqtgraph" not in meta
    assert "workbench = workbench.cli:main" in z.read(info + "entry_points.txt").decode()
    record = z.read(info + "RECORD").decode()
    assert all(n in record for n in names if not n.endswith("RECORD"))
    reqs = bundle.requirements(["azure"])
    assert any(r.startswith("azure-identity==") for r in reqs) and not any(r.startswith("boto3==") for r in reqs)


def test_setup_makes_a_unit_that_restarts_on_failure_and_starts_at_boot():
    for line in ("Restart=on-failure", "WantedBy=multi-user.target", "controller serve --config",
                 "systemctl enable", "WORKBENCH_CONTROLLER_END="):
        assert line in deploy.SETUP
    assert "--no-index --find-links wheelhouse" in deploy.SETUP and "--no-deps" in deploy.SETUP
    assert "systemctl start workbench-controller" in deploy.RUN


def test_without_systemd_the_service_is_started_again_when_it_fails(tmp_path):
    bin_dir = tmp_path / ".workbench-controller" / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    count = tmp_path / "runs"
    fake = bin_dir / "workbench"  # fails once (a crash), then ends as an idle controller does (exit 0)
    fake.write_text(f'#!/bin/sh\necho x >> {count}\n[ "$(wc -l < {count})" -ge 2 ] && exit 0\nexit 3\n')
    fake.chmod(0o755)
    (tmp_path / ".workbench-controller" / "supervisor").write_text("loop\n")
    env = {**os.environ, "HOME": str(tmp_path), "PATH": os.environ["PATH"]}
    out = subprocess.run(["sh", "-c", deploy.RUN], env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert count.read_text().count("x") == 2
    assert "stopped with exit code 3: starting it again" in out.stdout
