"""The on-machine guard's decisions: at the limit, not before, and never on a healthy busy job."""

from __future__ import annotations

from guardsim import LID, T0, FakeAzure, Machine

MIN = 60


def test_max_runtime_acts_at_the_limit_not_before(machine: Machine):
    assert machine.run(T0).rc == 0
    assert "armed: max runtime 1h00m" in machine.console
    assert machine.run(T0 + 3599).rc == 0 and machine.shutdowns == []
    r = machine.run(T0 + 3600)
    assert r.rc == 0 and machine.shutdowns == ["-h now"]
    assert "DECISION: max runtime of 1h00m reached" in machine.console and "-> shutdown" in machine.console
    assert machine.state["fired"]["done"] is True


def test_the_clock_survives_a_reboot(machine: Machine):
    machine.run(T0)  # first boot
    machine.run(T0 + 1800)
    # a reboot: new processes, same state file; the hour counts from the first boot, not this one
    assert machine.run(T0 + 3000).rc == 0 and machine.shutdowns == []
    machine.run(T0 + 3600)
    assert machine.shutdowns == ["-h now"]


def test_an_absolute_deadline_also_counts(machine: Machine):
    machine.configure(max_runtime_s=None, not_after=T0 + 100)
    machine.run(T0 + 99)
    assert machine.shutdowns == []
    machine.run(T0 + 100)
    assert machine.shutdowns == ["-h now"] and "deadline" in machine.console


def test_idle_gpus_end_the_machine_after_n_minutes(machine: Machine):
    machine.gpus(3, 0)
    machine.run(T0)
    assert "GPUs idle (highest 3 % < 5 %)" in machine.console
    machine.run(T0 + 599)
    assert machine.shutdowns == []
    machine.run(T0 + 600)
    assert machine.shutdowns == ["-h now"] and "every GPU below 5 %" in machine.console


def test_a_busy_moment_restarts_the_idle_clock(machine: Machine):
    machine.gpus(1, 1)
    machine.run(T0)
    machine.gpus(1, 60)  # one GPU busy is enough
    machine.run(T0 + 300)
    machine.gpus(1, 1)
    machine.run(T0 + 360)
    machine.run(T0 + 900)
    assert machine.shutdowns == []
    machine.run(T0 + 960)
    assert machine.shutdowns == ["-h now"]


def test_a_burst_between_reads_counts_as_busy(machine: Machine):
    machine.gpus(0, 0)
    (machine.root / "gpu" / "read1").write_text("0\n88\n")  # the second read of each check sees a burst
    machine.configure(max_runtime_s=None)
    machine.run(T0)
    for minute in range(1, 11):
        (machine.root / "gpu" / "calls").write_text("0")
        machine.run(T0 + minute * MIN)
    assert machine.shutdowns == []


def test_a_healthy_busy_job_is_never_touched(machine: Machine):
    machine.configure(max_runtime_s=None)
    for minute in range(0, 180, 7):
        machine.gpus(97 - minute % 50, 40 + minute % 30)
        machine.run(T0 + minute * MIN)
    assert machine.shutdowns == [] and "DECISION" not in machine.console


def test_no_gpu_reading_is_never_idle(machine: Machine):
    (machine.root / "gpu" / "broken").write_text("")
    machine.configure(max_runtime_s=None)
    for minute in range(0, 120, 10):
        machine.run(T0 + minute * MIN)
    assert machine.shutdowns == [] and "no GPU reading" in machine.console
    assert machine.console.count("no GPU reading") == 1  # logged once, not every minute


def test_finished_job_waits_the_grace_and_any_hold(machine: Machine):
    machine.run(T0)
    machine.finish(0)
    machine.run(T0 + 100)
    assert "job finished with exit code 0" in machine.console
    (machine.job / "hold").write_text(str(int(T0 + 1000)))  # the app is downloading outputs
    machine.run(T0 + 400)
    assert machine.shutdowns == []
    machine.run(T0 + 1000)
    assert machine.shutdowns == ["-h now"] and "grace period passed" in machine.console


def test_handled_or_keep_running_stand_the_finish_check_down_but_not_max_runtime(machine: Machine):
    machine.run(T0)
    machine.finish(1)
    (machine.job / "keep_running").write_text("")
    machine.run(T0 + 10)
    machine.run(T0 + 3000)
    assert machine.shutdowns == [] and "keep running was requested" in machine.console
    machine.run(T0 + 3600)
    assert machine.shutdowns == ["-h now"]


def test_on_finish_stop_and_keep_are_left_to_the_app(machine: Machine):
    machine.configure(on_finish="stop")
    machine.run(T0)
    machine.finish(0)
    machine.run(T0 + 10)
    machine.run(T0 + 2000)
    assert machine.shutdowns == [] and "on_finish is stop: left to the app" in machine.console
    r = machine.run(T0 + 2001, "--end-bill", "stop")  # AWS: a shutdown would terminate
    assert r.rc == 1 and machine.shutdowns == []
    r = machine.run(T0 + 2002, "--end-bill", "terminate")
    assert r.rc == 0 and machine.shutdowns == ["-h now"]


def test_azure_deletes_its_own_resource_group_with_the_managed_identity(machine: Machine, azure: FakeAzure):
    machine.configure(cloud="azure", azure={"imds": azure.url, "arm": azure.url, "resource": azure.url + "/"})
    machine.run(T0)
    machine.run(T0 + 3599)
    assert azure.calls("DELETE") == []
    machine.run(T0 + 3600)
    [(_, path, headers, query)] = azure.calls("DELETE")
    assert path == f"/subscriptions/sub-1/resourcegroups/wb-{LID}" and query["api-version"] == "2025-04-01"
    assert headers["Authorization"] == f"Bearer {FakeAzure.TOKEN}"
    token_calls = [r for r in azure.calls("GET") if r[1].endswith("/token")]
    assert token_calls[0][3]["resource"] == azure.url + "/" and token_calls[0][2]["Metadata"] == "true"
    assert machine.shutdowns == []  # an OS shutdown would not stop an Azure bill
    assert "deletion of the resource group of wb-" in machine.console and "accepted (HTTP 202)" in machine.console
    assert FakeAzure.TOKEN not in machine.console + (machine.root / "state" / "guard.json").read_text()


def test_azure_retries_until_the_delete_is_accepted_and_gone_is_success(machine: Machine, azure: FakeAzure):
    machine.configure(cloud="azure", max_runtime_s=60,
                      azure={"imds": azure.url, "arm": azure.url, "resource": azure.url + "/"})
    machine.run(T0)
    azure.token_status = 400  # no identity assigned (yet)
    machine.run(T0 + 60)
    assert azure.calls("DELETE") == [] and machine.state["fired"]["done"] is False
    assert "no managed-identity token from IMDS (HTTP 400)" in machine.console
    azure.token_status = 200
    azure.delete_status = 404
    machine.run(T0 + 120)
    assert len(azure.calls("DELETE")) == 1 and machine.state["fired"] == {
        "reason": machine.state["fired"]["reason"], "at": T0 + 60, "attempts": 2, "done": True}
    assert "already gone" in machine.console


def test_azure_stop_deallocates_the_vm(machine: Machine, azure: FakeAzure):
    machine.configure(cloud="azure", azure={"imds": azure.url, "arm": azure.url, "resource": azure.url + "/"})
    r = machine.run(T0, "--end-bill", "stop")
    assert r.rc == 0
    [(_, path, _, query)] = azure.calls("POST")
    assert path == f"/subscriptions/sub-1/resourcegroups/wb-{LID}/providers/Microsoft.Compute/virtualMachines/vm-1/deallocate"


def test_the_script_is_python_36_syntax_and_stdlib_only():
    import ast
    import sys

    from guardsim import SCRIPT

    tree = ast.parse(SCRIPT.read_text(), feature_version=(3, 6))  # the oldest python3 the clouds' images ship
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported and imported <= set(sys.stdlib_module_names)
