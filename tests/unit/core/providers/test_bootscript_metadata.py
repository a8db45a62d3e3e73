"""What every boot script records about its launch, written once in core; errors of the error tree."""

from __future__ import annotations

import json
import subprocess

import pytest

from workbench.core.domain.errors import PluginError, SpecError
from workbench.core.domain.models import Guards, JobSpec
from workbench.core.providers import bootscript as boot

SPEC = JobSpec(name="mnist", run="python3 main.py", guards=Guards(max_runtime_minutes=90, idle_minutes=20))


def test_launch_metadata_is_the_same_for_every_cloud():
    meta = boot.launch_metadata("mnist-0a1b2c", "install1", "alibaba", SPEC, "root", region="cn-beijing")
    assert meta == {"launch_id": "mnist-0a1b2c", "owner": "install1", "provider": "alibaba", "job": "mnist",
                    "ssh_user": "root", "max_runtime_minutes": 90, "idle_minutes": 20, "region": "cn-beijing"}
    assert json.loads(boot.launch_json("mnist-0a1b2c", "o", "aws", SPEC, "ubuntu"))["provider"] == "aws"
    assert boot.console_line("mnist-0a1b2c") == "workbench: launch mnist-0a1b2c started"


def test_heredoc_and_size_checks_raise_the_error_tree(tmp_path):
    text = boot.heredoc(str(tmp_path / "out.json"), '{"a": 1}', "MARK")
    subprocess.run(["sh", "-c", text], check=True)
    assert (tmp_path / "out.json").read_text() == '{"a": 1}\n'
    with pytest.raises(SpecError) as info:
        boot.heredoc("/x", "job MARK here", "MARK")
    assert "MARK" in info.value.message and info.value.hint
    assert boot.check_size("abc", 3, "user data") == "abc"
    with pytest.raises(PluginError, match="the user data is 4 bytes, over the 3-byte limit"):
        boot.check_size("abcd", 3, "user data")


def test_the_aws_boot_script_raises_the_error_tree_not_value_error():
    from workbench_aws import userdata

    with pytest.raises(SpecError, match="WORKBENCH_EOF"):
        userdata.render("mnist-0a1b2c", "install1", JobSpec(name="x WORKBENCH_EOF", run="true"), "ubuntu")
    big = JobSpec(name="n" * 17_000, run="true")
    with pytest.raises(PluginError, match="16384-byte limit"):
        userdata.render("mnist-0a1b2c", "install1", big, "ubuntu")
