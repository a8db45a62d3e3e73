"""The on-machine guard on Alibaba Cloud: firing and both end-bill actions shut the machine down (a stop there;
the instance's AutoReleaseTime, set at launch, releases it), and the boot script installs it configured so."""

from __future__ import annotations

import base64
import json

from guardsim import T0, Machine


def test_alibaba_fires_a_shutdown_and_stop_is_a_shutdown_too(machine: Machine):
    machine.configure(cloud="alibaba")
    machine.run(T0)
    assert machine.run(T0 + 3600).rc == 0 and machine.shutdowns == ["-h now"]
    assert "-> shutdown" in machine.console


def test_alibaba_end_bill_stop_shuts_down(machine: Machine):
    machine.configure(cloud="alibaba", on_finish="stop")
    r = machine.run(T0 + 5, "--end-bill", "stop")  # unlike AWS, where a shutdown would terminate
    assert r.rc == 0 and machine.shutdowns == ["-h now"]


def test_the_boot_script_installs_the_guard_for_alibaba():
    from workbench.core.domain.models import Guards, JobSpec
    from workbench_alibaba import userdata

    spec = JobSpec(name="t", run="python train.py", guards=Guards(max_runtime_minutes=90))
    script = userdata.render("launch-1", "owner-1", spec, "root", not_after=T0 + 5400)
    assert '"provider": "alibaba"' in script and '"not_after": ' in script
    config = next(line for line in script.splitlines() if "/etc/workbench/guard.json" in line and "base64" in line)
    packed = config.split()[2]  # printf '%s' PACKED | base64 -d | gzip -dc > path
    import gzip

    cfg = json.loads(gzip.decompress(base64.b64decode(packed)))
    assert cfg["cloud"] == "alibaba" and cfg["not_after"] == T0 + 5400 and cfg["max_runtime_s"] == 5400
    assert base64.b64decode(userdata.encode(script)).decode() == script
