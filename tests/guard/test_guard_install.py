"""The user data that installs the guard: valid cloud-config, small enough for AWS, the files it writes
work as written (extracted into a temp root and run), and the systemd units survive a reboot."""

from __future__ import annotations

import base64
import gzip
import json
import re
import subprocess
import sys

import pytest
import yaml

from guardsim import FAKE_NVIDIA_SMI, FAKE_SHUTDOWN, LID, T0
from workbench.core.providers import bootscript as gi
from workbench.core.domain.errors import ConfigError
from workbench.core.domain.jobspec import parse_spec

SPEC = parse_spec("name: train\nrun: python train.py\nresources:\n  gpu: V100:8\n"
                  "guards:\n  max_runtime: 2h\n  idle_minutes: 20\n  idle_util_below: 7\n")


def _files(doc: dict) -> dict[str, tuple[str, str]]:
    out = {}
    for f in doc["write_files"]:
        content = f["content"]
        if f.get("encoding") == "gz+b64":
            content = gzip.decompress(base64.b64decode(content)).decode()
        out[f["path"]] = (content, f["permissions"])
    return out


@pytest.mark.parametrize("cloud", ["aws", "azure"])
def test_cloud_config_installs_script_config_units_and_end_bill(cloud):
    text = gi.render_guard_userdata(SPEC, LID, cloud, not_after=T0, azure={"resource_group": "wb-rg"})
    # AWS allows 16 KB in all; with the plugins' own parts the user data is ~11.7 KB (bootscript refuses > 16 KB)
    assert text.startswith("#cloud-config\n") and len(text.encode()) < 12 * 1024
    doc = yaml.safe_load(text)
    files = _files(doc)
    assert set(files) == {gi.SCRIPT_PATH, gi.CONFIG_PATH, gi.END_BILL_PATH,
                          "/etc/systemd/system/workbench-guard.service", "/etc/systemd/system/workbench-guard.timer"}
    assert files[gi.SCRIPT_PATH][0] == (gi.paths.resources_dir() / "guard" / "workbench_guard.py").read_text()
    cfg = json.loads(files[gi.CONFIG_PATH][0])
    assert (cfg["cloud"], cfg["max_runtime_s"], cfg["idle_s"], cfg["idle_below"], cfg["not_after"]) == \
        (cloud, 7200, 1200, 7.0, T0)
    assert cfg["job_dirs"][1] == f"/home/*/.workbench/jobs/{LID}"
    assert ("azure" in cfg) == (cloud == "azure")
    service = files["/etc/systemd/system/workbench-guard.service"][0]
    timer = files["/etc/systemd/system/workbench-guard.timer"][0]
    assert f"ExecStart=/usr/bin/python3 {gi.SCRIPT_PATH} --config {gi.CONFIG_PATH}" in service
    assert "Type=oneshot" in service
    assert re.search(r"^OnBootSec=", timer, re.M) and re.search(r"^OnUnitActiveSec=60s", timer, re.M)
    assert "WantedBy=timers.target" in timer  # enabled: it comes back after every reboot
    assert ["systemctl", "enable", "--now", "workbench-guard.timer"] in doc["runcmd"]
    assert files[gi.END_BILL_PATH][1] == "0755" and "--end-bill" in files[gi.END_BILL_PATH][0]


def test_bad_input_is_refused():
    with pytest.raises(ConfigError):
        gi.render_guard_userdata(SPEC, LID, "gcp")
    with pytest.raises(ConfigError):
        gi.render_guard_userdata(SPEC, "../../etc", "aws")


def test_the_installed_files_work_as_written(tmp_path):
    """Write the cloud-config's files under a temp root and run the guard from there."""
    files = _files(yaml.safe_load(gi.render_guard_userdata(SPEC, LID, "aws")))
    root = tmp_path / "root"
    for path, (content, mode) in files.items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        target.chmod(int(mode, 8))
    cfg_path = root / gi.CONFIG_PATH.lstrip("/")
    cfg = json.loads(cfg_path.read_text())
    # point the machine paths into the temp root; everything else is as rendered
    cfg.update(state_path=str(root / "var/lib/workbench/guard" / f"{LID}.json"), console=str(root / "console"),
               job_dirs=[str(root / g.lstrip("/")) for g in cfg["job_dirs"]], gpu_read_interval_s=0)
    cfg_path.write_text(json.dumps(cfg))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("nvidia-smi", FAKE_NVIDIA_SMI), ("shutdown", FAKE_SHUTDOWN)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    gpu = tmp_path / "gpu"
    gpu.mkdir()
    (gpu / "util").write_text("2\n1\n0\n3\n0\n0\n1\n2\n")  # eight idle V100s
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "GPU_DIR": str(gpu)}

    def run(at: float) -> None:
        subprocess.run([sys.executable, str(root / gi.SCRIPT_PATH.lstrip("/")), "--config", str(cfg_path)],
                       env={**env, "WORKBENCH_GUARD_NOW": repr(at)}, check=True, capture_output=True, timeout=60)

    run(T0)
    run(T0 + 20 * 60 - 1)
    assert not (gpu / "shutdown.calls").exists()
    run(T0 + 20 * 60)
    assert (gpu / "shutdown.calls").read_text() == "-h now\n"
    assert "every GPU below 7 %" in (root / "console").read_text()


def test_shell_variant_is_valid_sh_and_carries_the_same_files():
    text = gi.render_guard_shell(SPEC, LID, "azure")
    assert subprocess.run(["sh", "-n"], input=text, text=True).returncode == 0
    payloads = dict(re.findall(r"printf '%s' '?([A-Za-z0-9+/=]+)'? \| base64 -d \| gzip -dc > '?([^'\n]+)'?", text))
    by_path = {p: gzip.decompress(base64.b64decode(b)).decode() for b, p in payloads.items()}
    assert set(by_path) == set(_files(yaml.safe_load(gi.render_guard_userdata(SPEC, LID, "azure"))))
    assert "systemctl enable --now workbench-guard.timer" in text
