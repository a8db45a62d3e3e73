"""Bad input: each case gets a clear message, a non-zero exit, and loses nothing."""

from __future__ import annotations

import sqlite3

import pytest

from wbcli import EXAMPLES


def test_malformed_yaml(wb, tmp_path):
    spec = tmp_path / "train.yaml"
    spec.write_text("name: x\nrun: [unclosed\n")
    r = wb("launch", str(spec), "--yes")
    assert r.rc == 1
    assert f"{spec}:" in r.err and "invalid YAML" in r.err


def test_unknown_gpu_model_suggests(wb, tmp_path):
    spec = tmp_path / "train.yaml"
    spec.write_text("name: x\nrun: echo\nresources:\n  gpu: V1OO:1\n")
    r = wb("launch", str(spec), "--yes")
    assert r.rc == 1
    assert "train.yaml:4: resources.gpu: unknown GPU model 'V1OO'" in r.err and "did you mean V100" in r.err
    r = wb("offers", "--gpu", "V1OO")
    assert r.rc == 1 and "did you mean V100" in r.err


def test_negative_and_non_numeric_budget(wb, tmp_path):
    for value in ("-5", "fifty"):
        spec = tmp_path / "b.yaml"
        spec.write_text(f"name: x\nrun: echo\nguards:\n  budget_usd: {value}\n")
        r = wb("launch", str(spec), "--yes", "--json")
        assert r.rc == 1, value
        assert r.json["error"]["kind"] == "spec" and "guards.budget_usd" in r.json["error"]["message"]
    assert wb("status", "--json").json["launches"] == []  # nothing launched


def test_unknown_provider_and_profile(wb):
    r = wb("launch", str(EXAMPLES / "local-smoke.yaml"), "--provider", "nosuch", "--yes")
    assert r.rc == 1 and "unknown provider 'nosuch'" in r.err and "local" in r.err
    r = wb("launch", str(EXAMPLES / "local-smoke.yaml"), "--profile", "nosuch", "--yes")
    assert r.rc == 1 and "no profile named 'nosuch'" in r.err
    r = wb("profiles", "add", "nosuch", "p1")
    assert r.rc == 1 and "unknown provider" in r.err


def test_plugin_that_raises_on_import_is_isolated(wb):
    r = wb("providers", "--json")
    assert r.rc == 0
    by_id = {p["id"]: p for p in r.json["providers"]}
    assert by_id["broken"]["available"] is False and "deliberately broken" in by_id["broken"]["reason"]
    assert by_id["local"]["available"] and by_id["fakecloud"]["available"]
    r = wb("launch", str(EXAMPLES / "local-smoke.yaml"), "--provider", "broken", "--yes")
    assert r.rc == 3 and "unavailable" in r.err and "deliberately broken" in r.err
    human = wb("providers")
    assert "unavailable: failed to import: RuntimeError" in human.out


def test_no_keyring_backend(wb):
    env = {k: v for k, v in wb.env.items() if not k.startswith("DBUS_")}
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    assert wb("profiles", "add", "fakecloud", "nokr").rc == 0
    r = wb("credentials", "set", "fakecloud", "nokr", "--stdin", stdin='{"account": "a", "token": "s3cr3t-value"}',
           env=env)
    assert r.rc == 3
    assert "no secure keyring" in r.err and "gnome-keyring" in r.err
    assert "s3cr3t-value" not in r.out + r.err
    # using the profile explains the same thing, and nothing is written anywhere in plain text
    r = wb("launch", str(EXAMPLES / "v100-single.yaml"), "--profile", "nokr", "--yes", env=env)
    assert r.rc == 3 and "keyring" in r.err
    for f in wb.home.rglob("*"):
        if f.is_file():
            assert b"s3cr3t-value" not in f.read_bytes(), f


def test_corrupt_database_is_moved_aside(wb):
    data = wb.home / "data"
    data.mkdir(parents=True)
    (data / "state.sqlite3").write_bytes(b"this is not a database" * 100)
    r = wb("status", "--json")
    assert r.rc == 0
    assert "moved aside" in r.err
    aside = [p for p in data.iterdir() if p.name.startswith("state.sqlite3.corrupt-")]
    assert len(aside) == 1 and aside[0].read_bytes() == b"this is not a database" * 100
    with sqlite3.connect(data / "state.sqlite3") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_unwritable_home(wb, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("I am a file, not a folder")
    env = dict(wb.env, WORKBENCH_HOME=str(blocker / "home"))
    r = wb("status", env=env)
    assert r.rc == 1 and "cannot write to" in r.err and "WORKBENCH_HOME" in r.err
    r = wb("doctor", "--json", env=env)
    assert r.rc == 1
    checks = {c["name"]: c for c in r.json["checks"]}
    assert checks["folders"]["status"] == "fail"


def test_down_of_unknown_launch_id(wb):
    r = wb("down", "nosuch-123456", "--yes", "--json")
    assert r.rc == 1 and r.json["error"]["kind"] == "not_found"
    assert wb("down", "../etc", "--yes").rc == 1
    assert wb("down", "--yes").rc == 1  # neither ids nor --all


def test_credentials_set_bad_stdin(wb):
    assert wb("profiles", "add", "fakecloud", "badjson").rc == 0
    r = wb("credentials", "set", "fakecloud", "badjson", "--stdin", stdin='{"account": "x", "token": "hunter2-secret"')
    assert r.rc == 1 and "not valid JSON" in r.err and "hunter2-secret" not in r.out + r.err
    r = wb("credentials", "set", "fakecloud", "badjson", "--stdin", stdin='{"token": "hunter2-secret"}')
    assert r.rc == 1 and "account" in r.err and "hunter2-secret" not in r.out + r.err
    r = wb("credentials", "set", "fakecloud", "badjson", stdin="{}")
    assert r.rc == 1 and "standard input" in r.err
    r = wb("credentials", "set", "fakecloud", "badjson", "--stdin", "hunter2")
    assert r.rc == 2  # argv is never a way to pass a secret


def test_launch_needs_confirmation(wb):
    r = wb("launch", str(EXAMPLES / "local-smoke.yaml"))
    assert r.rc == 1 and "--yes" in r.err
    assert wb("status", "--json").json["launches"] == []


def test_usage_errors_exit_2_and_help_documents_exit_codes(wb):
    assert wb("frobnicate").rc == 2
    assert wb("down", "--timeout", "-3", "--all").rc == 2
    h = wb("--help")
    assert h.rc == 0
    for line in ("0  ok", "2  usage error", "3  cloud or provider error", "4  something is still billing"):
        assert line in h.out


def test_doctor_reports_each_part(wb):
    r = wb("doctor", "--json")
    checks = {c["name"]: c for c in r.json["checks"]}
    assert {"python", "folders", "store", "Qt platform", "keyring", "provider local"} <= set(checks)
    assert checks["Qt platform"]["status"] == "ok" and "offscreen" in checks["Qt platform"]["detail"]
    assert checks["store"]["status"] == "ok" and "schema v" in checks["store"]["detail"]
    assert checks["provider broken"]["status"] == "warn" and checks["provider broken"]["hint"]
    assert r.rc == 0 and r.json["ok"]
    env = dict(wb.env, QT_QPA_PLATFORM="nosuchplatform")
    r = wb("doctor", "--json", env=env)
    qt = {c["name"]: c for c in r.json["checks"]}["Qt platform"]
    assert r.rc == 1 and qt["status"] == "fail" and "apt-get install" in qt["hint"]


def test_a_reader_that_leaves_early_gets_no_traceback(wb):
    """`workbench offers --json | head -c 10`: the pipe closes before the output ends."""
    import subprocess

    proc = subprocess.Popen(wb.argv("offers", "--gpu", "V100", "--json"), env=wb.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout.read(10).startswith(b"{")
    proc.stdout.close()  # the reader leaves (what head does after its bytes)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err and "internal error" not in err


def test_launch_without_yes_and_no_terminal_is_refused_before_any_summary(wb):
    # Issue 29: it printed "Launch local-smoke-…: …" (an id that never came to exist) and then refused
    r = wb("launch", str(EXAMPLES / "local-smoke.yaml"), "--provider", "local")
    assert r.rc == 1, r.out + r.err
    assert "standard input is not a terminal" in r.err and "--yes" in r.err
    assert "Launch " not in r.out + r.err
    assert wb("status", "--json").json["launches"] == []


@pytest.mark.parametrize("text, line, words", [
    ("name: x\nrun: echo\nresources:\n    gpu: V100\n  count: 1\n", 5, "the indentation does not line up"),
    ("name: x\nrun: echo hi: there\n", 2, "a second ':' on one line"),
    ("name: x\nrun:\n\t- echo\n", 3, "a tab character: indent with spaces"),
    ("name: x\nrun: [unclosed\n", 2, "a '[' list is not closed with ']'"),
    ("name: 'x\nrun: echo\n", 1, "a quoted value is never closed"),
])
def test_yaml_mistakes_are_said_in_plain_words(wb, tmp_path, text, line, words):
    # Issue 29: "expected <block end>, but found '<block mapping start>'" told a user nothing
    spec = tmp_path / "train.yaml"
    spec.write_text(text)
    r = wb("launch", str(spec), "--yes")
    assert r.rc == 1
    assert f"{spec}:{line}: invalid YAML: {words}" in r.err, r.err
    assert "<block" not in r.err and "scalar" not in r.err


def test_a_job_that_names_no_cloud_says_why_this_computer_was_tried(wb, tmp_path):
    # Issue 29: a SkyPilot task with no cloud answered "no offer on profile 'local' …", a profile never chosen
    task = tmp_path / "task.yaml"
    task.write_text("resources:\n  accelerators: V100:1\nrun: python train.py\n")
    r = wb("launch", str(task), "--yes")
    assert r.rc == 1, r.out + r.err
    assert "this job names no cloud and none was chosen, so it was tried on this computer, which has no 1× V100" \
        in r.err
    assert "workbench offers --gpu V100:1" in r.err and "profile 'local'" not in r.err


@pytest.mark.parametrize("body", ["env: " + "[" * 3000 + "]" * 3000, "file_mounts: " + "{a: " * 3000 + "1" + "}" * 3000,
                                  "env: " + "[" * 80 + "]" * 80])
def test_a_yaml_bomb_of_nesting_is_a_spec_error_not_a_crash(wb, tmp_path, body):
    # Issue 30: a 3000-level nested spec (or SkyPilot file_mounts) ended as kind "internal" (RecursionError)
    spec = tmp_path / "deep.yaml"
    spec.write_text(f"name: x\nrun: echo\n{body}\n")
    r = wb("launch", str(spec), "--yes", "--json")
    assert r.rc == 1, r.out + r.err
    assert r.json["error"]["kind"] == "spec" and "nested" in r.json["error"]["message"]
    assert "Traceback" not in r.err and "RecursionError" not in r.out + r.err
