"""Ports forwarded to this computer: which nodes, which local port, which URL, and nothing opened to the internet."""

from __future__ import annotations

import re
import socket

import pytest

from workbench.core.domain.models import Instance, InstanceState, Port
from workbench.core.remote.forwards import LOCAL_HOST, bind_local, nodes_for
from workbench.core.remote.port_services import jupyter_url, ports_json, service_label, url_for
from workbench_testing import ROOT


def _inst(rank: int) -> Instance:
    return Instance("fc", "p", f"i-{rank}", "L1", "r", "t", InstanceState.RUNNING, host=f"10.0.0.{rank}",
                    extra={"node_rank": rank, "num_nodes": 3})


def test_the_head_only_unless_the_spec_says_all_nodes():
    nodes = [_inst(2), _inst(0), _inst(1)]
    assert [i.instance_id for i in nodes_for(Port(8888), nodes)] == ["i-0"]
    assert [i.instance_id for i in nodes_for(Port(8000, node="all"), nodes)] == ["i-0", "i-1", "i-2"]


def test_a_taken_local_port_leads_to_another_and_only_on_loopback():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        port = taken.getsockname()[1]
        got = bind_local(port)
        try:
            host, other = got.getsockname()
            assert host == LOCAL_HOST and other != port
        finally:
            got.close()
        free = bind_local(0)
        assert free.getsockname()[0] == "127.0.0.1"
        free.close()
    finally:
        taken.close()


@pytest.mark.parametrize("line, url", [
    ("    http://127.0.0.1:8888/lab?token=abc123", "http://127.0.0.1:51000/lab?token=abc123"),
    ("[I ServerApp] http://localhost:8888/tree?token=f00d-e", "http://127.0.0.1:51000/tree?token=f00d-e"),
    ("  or http://ip-10-0-0-1:8888/?token=zz", "http://127.0.0.1:51000/?token=zz"),
    ("http://127.0.0.1:8888/?token=...", "http://127.0.0.1:51000/"),  # a token the user set is hidden
    ("http://127.0.0.1:9999/lab?token=other", None),  # another port's server
    ("nothing yet", None),
])
def test_jupyter_url_comes_from_the_log_rewritten_to_the_local_port(line, url):
    assert jupyter_url("starting\n" + line + "\n", 8888, 51000) == url


def test_the_last_token_printed_wins_and_plain_http_services_open_at_the_root():
    log = "http://127.0.0.1:8888/lab?token=old\nrestarted\nhttp://127.0.0.1:8888/lab?token=new\n"
    assert url_for(Port(8888, "jupyter"), 5000, log) == "http://127.0.0.1:5000/lab?token=new"
    for name in ("tensorboard", "vscode", "http"):
        assert url_for(Port(6006, name), 5001) == "http://127.0.0.1:5001/"
    assert url_for(Port(5432, "postgres"), 5002) is None  # not known to speak HTTP: no browser
    assert service_label(Port(8888, "jupyter")) == "8888 (Jupyter)" and service_label(Port(7000)) == "7000"
    (row,) = ports_json((Port(6006, "tensorboard"),), [], {})
    assert row == {"port": 6006, "name": "tensorboard", "node": "head", "service": "TensorBoard", "http": True,
                   "forwards": []}


def test_nothing_is_opened_to_the_internet_the_clouds_firewalls_allow_ssh_only():
    """Forwards ride on SSH: the plugins' rules open port 22 to an address and nothing else (the rest of
    their rules only let a launch's own nodes talk to each other), and no plugin reads the spec's ports."""
    aws = (ROOT / "plugins/workbench_aws/launch.py").read_text()
    assert set(re.findall(r'"(?:FromPort|ToPort)": (\d+)', aws)) == {"22"}
    azure = (ROOT / "plugins/workbench_azure/launch.py").read_text()
    assert set(re.findall(r'"destinationPortRange": "([^"]+)"', azure)) == {"22"}
    ali = (ROOT / "plugins/workbench_alibaba/launch.py").read_text()
    assert set(re.findall(r'"PortRange": "([^"]+)"', ali)) == {"22/22"}
    for cluster in ("workbench_aws/cluster.py", "workbench_azure/cluster.py", "workbench_alibaba/cluster.py"):
        text = (ROOT / "plugins" / cluster).read_text()
        assert "0.0.0.0/0" not in text and "Internet" not in text, cluster
    for path in (ROOT / "plugins").rglob("*.py"):
        assert not re.search(r"spec\.ports|\.ports\b", path.read_text()), path
