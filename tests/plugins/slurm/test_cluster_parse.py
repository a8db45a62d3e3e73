"""The cluster snapshot, its GPU shapes and offers, and a request checked before sbatch
(plugins/workbench_slurm/cluster.py), on outputs recorded from a real Slurm 22.05
(tests/fixtures/slurm/recorded/README.md says what the cluster was doing in each)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from workbench_slurm import cluster, formats

from workbench.core.domain.errors import ConfigError, PluginError, TransientError
from workbench.core.domain.phrase import Phrase

RECORDED = Path(__file__).resolve().parents[2] / "fixtures" / "slurm" / "recorded"
MODELS = {"a100": "A100"}  # the test cluster's untyped GRES, mapped as a profile would


def snap(name: str) -> cluster.ClusterSnapshot:
    return cluster.parse_snapshot((RECORDED / name).read_text())


def test_the_recorded_snapshots_are_the_output_of_the_command_as_it_is_now(tmp_path):
    readme = (RECORDED / "README.md").read_text()
    assert cluster.SNAPSHOT_COMMAND in readme  # the README names the command the files were recorded with
    # the command is plain sh: on a login node without Slurm's commands it still prints every section,
    # and the snapshot says what is missing
    for tool in ("sh", "id"):
        (tmp_path / tool).symlink_to(subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True,
                                                    text=True, check=True).stdout.strip())
    out = subprocess.run(["sh", "-c", cluster.SNAPSHOT_COMMAND], capture_output=True, text=True, timeout=30,
                         env={"PATH": str(tmp_path)}).stdout
    assert list(formats.sections(out)) == ["user", "partitions", "nodes"]
    with pytest.raises(ConfigError, match="no Slurm commands") as err:
        cluster.parse_snapshot(out)
    assert "scontrol: not found" in err.value.message


def test_idle_cluster_partitions_and_nodes():
    s = snap("snapshot_idle.txt")
    assert s.user == "root"
    gpu, a100, debug = s.partitions
    assert (gpu.name, gpu.nodes, gpu.max_time_s, gpu.default, gpu.state) == ("gpu", ("node1", "node2"), 1800, True, "UP")
    assert gpu.allow_accounts is None and gpu.deny_accounts is None and gpu.allow_qos is None
    assert (a100.max_time_s, a100.default) == (3600, False)
    assert (debug.max_time_s, debug.allow_accounts, debug.nodes) == (120, ("physics",), ("node1",))
    assert s.default_partition is gpu
    node1, node2, node3 = s.nodes
    assert node1.partitions == ("gpu", "debug")
    assert (node1.gpu_type, node1.gpus, node1.gpus_used, node1.cpus, node1.memory_mb) == ("v100", 2, 0, 2, 8000)
    assert (node3.gpu_type, node3.gpus) == (None, 2)  # untyped GRES
    assert node1.addr == "127.0.0.1" and node1.usable and node1.gpus_free == 2
    assert node1.state == "IDLE"


def test_a_running_job_shows_as_gpus_in_use():
    s = snap("snapshot_jobs_running.txt")
    node1, node2, node3 = s.nodes
    assert (node1.state, node1.gpus_used, node1.cpus_alloc, node1.gpus_free) == ("MIXED", 1, 1, 1)
    assert (node2.gpus_used, node2.gpus_free) == (0, 2)
    assert (node3.gpus_used, node3.gpus_free) == (1, 1)  # untyped: GresUsed=gpu:1
    gpu = next(x for x in cluster.shapes(s, MODELS) if x.partition == "gpu")
    assert (gpu.nodes_total, gpu.nodes_free, gpu.gpus_free, gpu.gpus_total) == (2, 2, 3, 4)


def test_shapes_name_models_from_gres_types_or_the_partition_mapping():
    s = snap("snapshot_idle.txt")
    by_partition = {x.partition: x for x in cluster.shapes(s, MODELS)}
    assert set(by_partition) == {"gpu", "a100", "debug"}
    gpu, a100 = by_partition["gpu"], by_partition["a100"]
    assert (gpu.gpu_type, gpu.gpu_model, gpu.gpus_per_node, gpu.cpus_per_node, gpu.memory_gb) == ("v100", "V100", 2, 2, 7.8)
    assert (gpu.max_time_s, gpu.note) == (1800, None)
    assert (a100.gpu_type, a100.gpu_model, a100.note) == (None, "A100", None)
    # untyped GRES and no mapping: no model, and a note that says what to set
    bare = {x.partition: x for x in cluster.shapes(s, {})}["a100"]
    assert bare.gpu_model is None
    assert isinstance(bare.note, Phrase) and "a100=MODEL" in str(bare.note)


def test_offers_one_per_gpu_count_free_now_by_count():
    s = snap("snapshot_jobs_running.txt")  # node1: 1 of 2 V100 in use, node3: 1 of 2 untyped in use
    found = cluster.offers(cluster.shapes(s, MODELS), provider="slurm", region="wbtest", rate_per_gpu_hour=None,
                           currency="USD", as_of="2026-12-05")
    by_name = {o.instance_type: o for o in found}
    assert list(by_name) == ["gpu · 1×V100", "gpu · 2×V100", "a100 · 1×A100", "a100 · 2×A100",
                             "debug · 1×V100", "debug · 2×V100"]
    one, two = by_name["gpu · 1×V100"], by_name["gpu · 2×V100"]
    assert (one.gpu_model, one.gpu_count, one.gpu_memory_gb, one.vcpus, one.memory_gb) == ("V100", 1, 16.0, 1, 3.9)
    assert (two.gpu_count, two.vcpus, two.memory_gb) == (2, 2, 7.8)
    assert one.availability_note == "free now: 2 of 2 nodes"
    assert two.availability_note == "free now: 1 of 2 nodes"  # node1 has only one GPU free
    assert one.extra == {"partition": "gpu", "gres_type": "v100", "nodes_total": 2, "nodes_free": 2,
                         "gpus_free": 3, "gpus_total": 4, "max_time_s": 1800, "gpus_per_node": 2,
                         "cpus_per_node": 2, "memory_gb_per_node": 7.8}
    assert (one.provider, one.region, one.available) == ("slurm", "wbtest", True)
    assert (one.prices.on_demand, one.prices.source, one.prices.currency, one.prices.as_of) == (
        0.0, "your cluster", "USD", "2026-12-05")
    assert by_name["a100 · 2×A100"].availability_note == "free now: 0 of 1 nodes"
    assert by_name["a100 · 1×A100"].gpu_memory_gb == 40.0
    # the GUI rebuilds the translatable phrase from extra
    assert str(cluster.free_now(two.extra["nodes_free"], two.extra["nodes_total"])) == two.availability_note
    assert found[0].to_json()["extra"]["partition"] == "gpu"


def test_offers_priced_by_the_profile_rate_per_gpu_hour():
    found = cluster.offers(cluster.shapes(snap("snapshot_idle.txt"), MODELS), provider="slurm", region="c",
                           rate_per_gpu_hour=0.75, currency="EUR", as_of="2026-12-05")
    two = next(o for o in found if o.instance_type == "gpu · 2×V100")
    assert (two.prices.on_demand, two.prices.source, two.prices.currency) == (1.5, "profile setting", "EUR")


def test_drained_node_is_not_free():
    s = snap("snapshot_node2_drained.txt")
    node2 = s.nodes[1]
    assert node2.state == "IDLE+DRAIN" and not node2.usable and node2.gpus_free == 0
    one = next(o for o in cluster.offers(cluster.shapes(s, MODELS), provider="slurm", region="c",
                                         rate_per_gpu_hour=None, currency="USD", as_of="x")
               if o.instance_type == "gpu · 1×V100")
    assert one.availability_note == "free now: 1 of 2 nodes"


def test_variant_cluster_two_gpu_types_down_node_cpu_partition_down_partition():
    s = snap("snapshot_variant.txt")
    assert [p.name for p in s.partitions] == ["gpu", "mixed", "cpu", "closed", "a100", "debug"]
    closed = s.partition("closed")
    assert (closed.state, closed.deny_accounts, closed.max_nodes, closed.max_time_s) == ("DOWN", ("chemistry",), 1, None)
    assert s.partition("mixed").max_time_s == 86400 and s.partition("mixed").nodes == ("node1", "node2")
    node2, node3, node4 = s.nodes[1:]
    assert dict(node2.gres) == {"v100": 1, "a100_80g": 1} and node2.gpus == 2 and node2.gpus_used == 1
    assert (node2.free_of("v100"), node2.free_of("a100_80g")) == (1, 0)
    assert node3.state == "DOWN" and not node3.usable and node3.gpus_free == 0
    assert (node4.gpus, node4.gres) == (0, ())
    found = {o.instance_type: o for o in cluster.offers(cluster.shapes(s, {}), provider="slurm", region="c",
                                                        rate_per_gpu_hour=None, currency="USD", as_of="x")}
    assert not any(name.startswith("cpu ·") for name in found)  # a CPU-only partition makes no offer
    a100_80 = found["mixed · 1×A100"]
    assert (a100_80.extra["gres_type"], a100_80.gpu_memory_gb, a100_80.availability_note) == (
        "a100_80g", 80.0, "free now: 0 of 1 nodes")
    assert found["mixed · 1×V100"].availability_note == "free now: 2 of 2 nodes"
    assert found["mixed · 2×V100"].availability_note == "free now: 1 of 1 nodes"  # only node1 has 2
    assert not found["closed · 1×V100"].available and "DOWN" in found["closed · 1×V100"].availability_note
    untyped = found["a100 · 1×GPU"]
    assert untyped.gpu_model is None and "a100=MODEL" in untyped.extra["gpu_model_note"]
    assert untyped.availability_note == "free now: 0 of 1 nodes"  # node3 is down


def test_invalid_registration_node_is_not_usable():
    node2 = snap("snapshot_variant_invalid_node.txt").nodes[1]
    assert node2.state == "UNKNOWN+DRAIN+INVALID_REG" and not node2.usable


def test_failed_commands_raise_with_slurms_words():
    with pytest.raises(ConfigError) as no_conf:
        snap("snapshot_no_slurm_conf.txt")
    assert "no configuration" in no_conf.value.message and "fetch_config" in no_conf.value.message
    assert "SLURM_CONF" in no_conf.value.hint
    with pytest.raises(TransientError) as down:
        snap("snapshot_controller_down.txt")
    assert "Unable to contact slurm controller" in down.value.message


def test_login_banner_before_the_markers_is_ignored_and_garbage_is_a_plugin_error():
    text = "Welcome to the HPC cluster!\nQuota: 12 GB of 50 GB used\n" + (RECORDED / "snapshot_idle.txt").read_text()
    assert [p.name for p in cluster.parse_snapshot(text).partitions] == ["gpu", "a100", "debug"]
    with pytest.raises(PluginError, match="not a Slurm snapshot.*Last login"):
        cluster.parse_snapshot("Last login: yesterday\n")
    cut = (RECORDED / "snapshot_idle.txt").read_text().split("@@workbench-slurm@@ rc=0\n@@workbench-slurm@@ nodes")[0]
    with pytest.raises(PluginError):
        cluster.parse_snapshot(cut + "@@workbench-slurm@@ nodes\nNodeName=node1 State=IDLE")  # ended early


def test_allocated_gpus_read_from_alloc_tres_without_gres_used():
    # hand-derived from the recorded node line: the form of `scontrol show node -o` without -d on a cluster
    # that tracks GPUs as TRES (AccountingStorageTRES=gres/gpu)
    line = next(ln for ln in (RECORDED / "snapshot_jobs_running.txt").read_text().splitlines() if ln.startswith("NodeName=node1"))
    line = line.replace(" GresDrain=N/A GresUsed=gpu:v100:1(IDX:0)", "").replace("AllocTRES=cpu=1", "AllocTRES=cpu=1,gres/gpu=1")
    node = cluster._node(formats.record(line))
    assert (node.gpus, node.gpus_used, node.gpus_free, node.free_of("v100")) == (2, 1, 1, 1)
    typed = cluster._node(formats.record(line.replace("gres/gpu=1", "gres/gpu=2,gres/gpu:v100=2")))
    assert (typed.gpus_used, typed.free_of("v100")) == (2, 0)


def test_check_request_accepts_what_fits():
    s = snap("snapshot_idle.txt")
    ok = dict(gpu_type=None, gpus_per_node=1, nodes=1, time_limit_s=600, account=None)
    assert cluster.check_request(s, partition=None, **ok) == "gpu"  # the default partition
    assert cluster.check_request(s, partition="gpu", **{**ok, "gpu_type": "V100", "gpus_per_node": 2, "nodes": 2,
                                                       "time_limit_s": 1800}) == "gpu"
    assert cluster.check_request(s, partition="a100", **{**ok, "gpus_per_node": 2, "time_limit_s": 3600}) == "a100"
    assert cluster.gres_type(s, "gpu", "V100") == "v100" and cluster.gres_type(s, "a100", "A100") is None


@pytest.mark.parametrize(("kw", "message", "hint"), [
    (dict(partition="nosuch"), "the cluster has no partition nosuch", "gpu, a100, debug"),
    (dict(partition="gpu", gpus_per_node=3), "partition gpu has at most 2 GPUs per node (V100); the job asks 3",
     "at most 2 GPUs per node"),
    (dict(partition="gpu", gpu_type="A100"), "partition gpu has no A100 GPUs (it has: V100)", None),
    (dict(partition="gpu", gpu_type="v100", gpus_per_node=2, nodes=3),
     "partition gpu has 2 nodes with 2 GPUs; the job asks 3", "at most 2 nodes"),
    (dict(partition="debug", time_limit_s=7200, account="physics"),
     "max runtime 2 h is beyond partition debug's limit of 2 min", "lower the max runtime to 2 min"),
    (dict(partition="debug", time_limit_s=3000), "max runtime 50 min is beyond partition debug's limit of 2 min",
     "pick a partition with a longer limit: a100"),
    (dict(partition="gpu", time_limit_s=1801), "max runtime 31 min is beyond partition gpu's limit of 30 min", "a100"),
    (dict(partition="gpu", cpus_per_node=8), "partition gpu's nodes have at most 2 CPUs; the job asks 8", "2 CPUs"),
    (dict(partition="gpu", mem_mb_per_node=100000), "partition gpu's nodes have at most 7.8 GB of memory", "7.8 GB"),
    (dict(partition="debug", account=None), "partition debug takes only jobs of the account physics", "account"),
    (dict(partition="debug", account="chemistry"), "takes only jobs of the account physics, not chemistry", None),
])
def test_check_request_refuses_with_what_would_work(kw, message, hint):
    s = snap("snapshot_idle.txt")
    req = dict(partition=None, gpu_type=None, gpus_per_node=1, nodes=1, time_limit_s=60, account=None) | kw
    with pytest.raises(ConfigError) as err:
        cluster.check_request(s, **req)
    assert message in err.value.message
    if hint:
        assert hint in err.value.hint


def test_check_request_deny_accounts_max_nodes_and_a_cpu_only_partition():
    s = snap("snapshot_variant.txt")
    req = dict(gpu_type=None, gpus_per_node=1, nodes=1, time_limit_s=60, account="chemistry")
    with pytest.raises(ConfigError, match="does not take jobs of account chemistry"):
        cluster.check_request(s, partition="closed", **req)
    assert cluster.check_request(s, partition="closed", **{**req, "account": "physics"}) == "closed"
    with pytest.raises(ConfigError, match="has no GPUs") as cpu:
        cluster.check_request(s, partition="cpu", **req)
    assert "gpu, mixed" in cpu.value.hint
    assert cluster.check_request(s, partition="cpu", **{**req, "gpus_per_node": 0}) == "cpu"
    with pytest.raises(ConfigError, match="has 1 node with 1 GPU; the job asks 2"):  # A100 only on node2
        cluster.check_request(s, partition="mixed", **{**req, "gpu_type": "A100", "nodes": 2})
    assert cluster.gres_type(s, "mixed", "A100") == "a100_80g"


def test_check_request_refuses_a_drained_or_inactive_partition():
    # derived in the test from the recorded idle snapshot: partition a100's State=UP changed (what
    # `scontrol update partitionname=a100 state=drain` shows; sbatch then refuses, sbatch_partition_drained.txt)
    idle = (RECORDED / "snapshot_idle.txt").read_text()
    line = next(ln for ln in idle.splitlines() if ln.startswith("PartitionName=a100 "))
    for state in ("DRAIN", "INACTIVE"):
        s = cluster.parse_snapshot(idle.replace(line, line.replace(" State=UP ", f" State={state} ")))
        with pytest.raises(ConfigError, match=f"partition a100 takes no new jobs now \\(it is {state}\\)") as err:
            cluster.check_request(s, partition="a100", gpu_type=None, gpus_per_node=1, nodes=1, time_limit_s=60,
                                  account=None)
        assert "gpu, a100, debug" in err.value.hint
        assert not next(o for o in cluster.offers(cluster.shapes(s, MODELS), provider="slurm", region="c",
                                                  rate_per_gpu_hour=None, currency="USD", as_of="x")
                        if o.extra["partition"] == "a100").available


def test_partition_nodes_from_its_host_list_when_nodes_do_not_name_their_partitions():
    # derived from the recorded idle snapshot: the nodes' Partitions= taken out (a Slurm that does not print
    # it, or a node line cut short); the partitions' own Nodes=node[1-2] then say who is in them
    idle = (RECORDED / "snapshot_idle.txt").read_text()
    bare = "\n".join(re.sub(r" Partitions=\S+", "", ln) for ln in idle.splitlines())
    s = cluster.parse_snapshot(bare)
    assert s.nodes[0].partitions == () and s.partition("gpu").nodes == ("node1", "node2")
    assert [n.name for n in s.nodes_of("gpu")] == ["node1", "node2"]
    assert {x.partition: x.nodes_total for x in cluster.shapes(s, MODELS)} == {"gpu": 2, "a100": 1, "debug": 1}
