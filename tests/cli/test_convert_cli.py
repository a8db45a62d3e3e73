"""`workbench convert` and `workbench launch` of SkyPilot and dstack files, with the real CLI and Local provider."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from wbcli import ROOT, wait_for
from workbench.core.domain.jobspec import parse_spec, spec_from_dict

FIX = ROOT / "tests" / "fixtures" / "importers"
SKY, DST, SYN = FIX / "skypilot", FIX / "dstack", FIX / "synthetic"
SECRET = "tok-4f1b9c77e2a3"  # the value given at launch; it must not be written anywhere


def test_convert_prints_our_spec_with_a_comment_on_every_field(wb):
    r = wb("convert", str(SKY / "llama-3_1-finetuning" / "lora.yaml"))
    assert r.rc == 0, r.err
    assert r.out.startswith(f"# {SKY / 'llama-3_1-finetuning' / 'lora.yaml'}: a SkyPilot task")
    assert "#   line 21: resources.disk_tier: disks here are" in r.out  # ignored, with the reason
    assert "# line 20: resources.accelerators → resources.gpu: 8× A100 — read as exactly 8 (SkyPilot counts are " \
           "exact)" in r.out
    assert "# line 13: envs.HF_TOKEN → HF_TOKEN: no value in the file — asked for at launch" in r.out
    # the YAML under the comments is a workbench spec: it parses back to what --json says
    spec = parse_spec(r.out, source="converted.yaml")
    js = wb("convert", str(SKY / "llama-3_1-finetuning" / "lora.yaml"), "--json")
    assert js.rc == 0 and js.json["kind"] == "skypilot" and js.json["refused"] == []
    assert spec == spec_from_dict({**js.json["spec"], "source": "converted.yaml"})
    assert js.json["yaml"] and yaml.safe_load(js.json["yaml"])["secrets"] == ["HF_TOKEN"]
    fields = {f["field"]: f for f in js.json["fields"]}
    assert fields["resources.disk_tier"] == {"line": 21, "field": "resources.disk_tier", "status": "ignored",
                                             "detail": fields["resources.disk_tier"]["detail"], "target": None}
    assert fields["file_mounts./output"]["target"] == "storage"


def test_convert_of_a_refused_file_lists_every_refusal_and_exits_1(wb):
    path = DST / "misc" / "docker-compose" / "task.dstack.yml"
    r = wb("convert", str(path))
    assert r.rc == 1
    assert "# Refused — cannot run here yet" in r.out
    assert re.search(r"#   line 4: docker: .*\n#   line 21: volumes: ", r.out)
    assert "#   line 11: ports → ports: 9000" in r.out  # would be mapped: ports are no refusal any more
    assert "2 field(s) of this dstack task cannot run here yet" in r.err
    js = wb("convert", str(path), "--json")
    assert js.rc == 1 and js.json["spec"] is None and js.json["yaml"] is None
    assert [f["line"] for f in js.json["refused"]] == [4, 21]
    assert js.json["error"]["kind"] == "spec" and f"{path}:4: docker:" in js.json["error"]["message"]


def test_convert_of_the_files_once_refused_for_image_and_ports_explains_each_field(wb):
    """Issue 34: the public examples refused for a container image or ports now convert; each field has its
    comment, the image and ports included, and the readings of GPU counts, memory and the disk are said."""
    cases = {
        SKY / "jupyter_lab.yaml": ["# line 15: resources.ports → ports: 29324 — forwarded over SSH to 127.0.0.1",
                                   "29324 is jupyter", "SkyPilot's default 256 GB"],
        SKY / "autoresearch" / "experiment.yaml": [
            "# line 3: resources.image_id → image: nvcr.io/nvidia/pytorch:24.07-py3",
            "resources.gpu: 1× H100 — read as exactly 1 (SkyPilot counts are exact)"],
        DST / "single-node-training" / "axolotl" / ".dstack.yml": [
            "# line 6: image → image: axolotlai/axolotl:main-latest",
            "# line 27: resources.shm_size → image.shm_size: 24g",
            "read as exactly 2 GPUs, as dstack does"],
        DST / "single-node-training" / "qlora" / ".dstack.yml": [
            "# line 13: ports → ports: 6006", "6006 is tensorboard",
            "read as exactly 1 GPU and 16 to 24 GB per GPU, as dstack does"],
    }
    for path, expected in cases.items():
        r = wb("convert", str(path))
        assert r.rc == 0, r.err
        for text in expected:
            assert text in r.out, (path, text)
        spec = parse_spec(r.out, source="converted.yaml")  # the YAML under the comments is our spec
        assert spec.image is not None or spec.ports
        js = wb("convert", str(path), "--json")
        assert js.rc == 0 and js.json["refused"] == []
        assert spec == spec_from_dict({**js.json["spec"], "source": "converted.yaml"})
        fields = {f["field"] for f in js.json["fields"]}
        assert {"image", "resources.image_id", "ports", "resources.ports"} & fields


def test_convert_and_launch_of_a_file_that_is_no_job_file(wb):
    path = DST / "misc" / "github-actions" / ".dstack.yml"
    for argv in (("convert", str(path)), ("launch", str(path), "--provider", "local", "--yes")):
        r = wb(*argv)
        assert r.rc == 1 and f"{path}:1: this is not a job file" in r.err


def test_a_refused_file_launches_nothing(wb):
    r = wb("launch", str(SKY / "custom_image.yaml"), "--provider", "local", "--yes", "--json")
    assert r.rc == 1
    assert r.json["error"]["message"].startswith(f"{SKY / 'custom_image.yaml'}:6: resources.image_id:")
    assert wb("status", "--json").json["launches"] == []


def test_a_skypilot_file_runs_unchanged_on_this_computer(wb):
    r = wb("launch", str(SKY / "minimal.yaml"), "--provider", "local", "--yes", "--json")
    assert r.rc == 0, r.err
    lid = r.json["launch"]["launch_id"]
    logs = wb("logs", lid, "--follow", "--interval", "0.2", timeout=60)
    assert logs.rc == 0 and "running setup" in logs.out and "hello, SkyPilot!" in logs.out
    entry = next(x for x in wb("status", "--json").json["launches"] if x["launch_id"] == lid)
    assert entry["status"] == "finished" and entry["instances"][0]["exit_code"] == 0


def test_a_dstack_file_runs_on_this_computer(wb):
    r = wb("launch", str(DST / "misc" / "airflow" / "dags" / "dstack-repo" / "task.dstack.yml"),
           "--provider", "local", "--yes", "--json")
    assert r.rc == 0, r.err
    lid = r.json["launch"]["launch_id"]
    assert r.json["launch"]["name"] == "task"
    wait_for(lambda: "Running dstack task via Airflow" in wb("logs", lid).out, timeout=30)
    down = wb("down", lid, "--yes", "--json")  # it sleeps 10 s next: no need to wait for it
    assert down.rc == 0 and down.json["clean"]


def _no_trace_of_the_secret(home: Path) -> None:
    for path in home.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), f"the secret was written to {path}"


def test_a_secret_reaches_the_job_and_nowhere_else(wb):
    spec = SYN / "secret_echo.yaml"
    missing = wb("launch", str(spec), "--provider", "local", "--yes")
    assert missing.rc == 1 and "no value for HF_TOKEN" in missing.err and "--secret-env" in missing.err
    r = wb("launch", str(spec), "--provider", "local", "--yes", "--json", "--env", f"HF_TOKEN={SECRET}",
           "--env", "GREETING=hi")
    assert r.rc == 0, r.err
    lid = r.json["launch"]["launch_id"]
    logs = wb("logs", lid, "--follow", "--interval", "0.2", timeout=60)
    assert f"hi: token of {len(SECRET)} characters" in logs.out and "token prefix ok" in logs.out
    assert SECRET not in logs.out + r.out + r.err
    _no_trace_of_the_secret(wb.home)


def test_a_secret_can_come_from_this_computers_environment(wb):
    env = dict(wb.env, HF_TOKEN=SECRET)
    r = wb("launch", str(SYN / "secret_echo.yaml"), "--provider", "local", "--yes", "--json",
           "--secret-env", "HF_TOKEN", env=env)
    assert r.rc == 0, r.err
    logs = wb("logs", r.json["launch"]["launch_id"], "--follow", "--interval", "0.2", timeout=60)
    assert "hello: token of" in logs.out and "token prefix ok" in logs.out
    _no_trace_of_the_secret(wb.home)
    bad = wb("launch", str(SYN / "secret_echo.yaml"), "--provider", "local", "--yes", "--secret-env", "OTHER",
             env=env)
    assert bad.rc == 1 and "does not ask for OTHER" in bad.err
    unset = {k: v for k, v in wb.env.items() if k != "HF_TOKEN"}
    gone = wb("launch", str(SYN / "secret_echo.yaml"), "--provider", "local", "--yes", "--secret-env", "HF_TOKEN",
              env=unset)
    assert gone.rc == 1 and "HF_TOKEN is not set in this computer's environment" in gone.err


def test_on_a_terminal_the_secret_is_asked_for_without_echo(wb):
    """A real pseudo-terminal: the prompt appears, the typed value is not echoed, the job gets it."""
    import os
    import pty
    import select
    import time

    argv = wb.argv("launch", str(SYN / "secret_echo.yaml"), "--provider", "local", "--yes")
    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI, with the pty as its controlling terminal
        os.execvpe(argv[0], argv, wb.env)
    seen = b""

    def read_until(marker: bytes, seconds: float = 30) -> None:
        nonlocal seen
        deadline = time.monotonic() + seconds
        while marker not in seen:
            assert time.monotonic() < deadline, seen.decode(errors="replace")
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk

    try:
        read_until(b"HF_TOKEN (asked by the job spec; not stored): ")
        os.write(fd, SECRET.encode() + b"\n")
        read_until(b"follow the log: workbench logs")
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, seen.decode(errors="replace")
    assert SECRET.encode() not in seen  # not echoed
    lid = re.search(rb"launch id: (\S+)", seen).group(1).decode()
    logs = wb("logs", lid, "--follow", "--interval", "0.2", timeout=60)
    assert "token prefix ok" in logs.out
    _no_trace_of_the_secret(wb.home)
