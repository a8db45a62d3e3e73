"""The wizard's job page: a spec's ports show in the Ports field, edits go into the spec, a bad item blocks Next."""

from __future__ import annotations

import pytest

from workbench.core.domain.models import Port
from workbench.ui.launch.launch_draft import Draft
from workbench.ui.launch.launch_job_page import JobPage
from workbench.ui.launch.ports_field import parse_ports, ports_text


def test_ports_field_round_trips_the_spec_and_refuses_bad_items(qtbot, tmp_path):
    spec_file = tmp_path / "job.yaml"
    spec_file.write_text("name: nb\nrun: jupyter lab\nports: [{port: 8888, name: jupyter}, "
                         "{port: 6006, name: tensorboard}, {port: 8000, node: all}]\n")
    page = JobPage(Draft())
    qtbot.addWidget(page)
    assert page.load_file(str(spec_file))
    assert page.ports_edit.text() == "8888:jupyter, 6006:tensorboard, 8000@all"
    assert page.build_spec().ports == (Port(8888, "jupyter"), Port(6006, "tensorboard"), Port(8000, None, "all"))
    page.ports_edit.setText("8888:jupyter 7000:vscode")
    assert page.isComplete() and page.build_spec().ports == (Port(8888, "jupyter"), Port(7000, "vscode"))
    page.ports_edit.setText("8888, 99999")
    assert not page.isComplete() and "'99999' is not PORT[:NAME][@all]" in page.problem()
    page.ports_edit.setText("8888, 8888:jupyter")
    assert "8888 is listed twice" in page.problem()
    page.ports_edit.clear()
    assert page.isComplete() and page.build_spec().ports == ()


@pytest.mark.parametrize("text, ports", [
    ("", ()), ("8888", (Port(8888),)), (" 8888:Jupyter ,6006:tensorboard@all ",
                                         (Port(8888, "jupyter"), Port(6006, "tensorboard", "all"))),
])
def test_ports_text_parses_and_prints_alike(text, ports):
    assert parse_ports(text) == ports and parse_ports(ports_text(ports)) == ports
