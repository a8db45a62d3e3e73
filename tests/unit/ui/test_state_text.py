"""The state column: spot interruption and exit codes are shown, not hidden behind the cloud's state."""

from __future__ import annotations

from workbench.core.domain.models import Instance, InstanceState
from workbench.ui.instances.instances_model import state_text


def _inst(state: InstanceState, **kw) -> Instance:
    return Instance("aws", "p", "i-1", "l-1", "us-east-1", "p3.2xlarge", state, **kw)


def test_spot_interruption_is_its_own_state(qapp) -> None:
    assert state_text(_inst(InstanceState.TERMINATED, extra={"spot_interrupted": True})).startswith("Spot interrupted (")
    assert state_text(_inst(InstanceState.TERMINATED, extra={"evicted": True})).startswith("Spot interrupted (")
    assert "Spot interrupted" not in state_text(_inst(InstanceState.TERMINATED))


def test_exit_code_follows_the_state(qapp) -> None:
    assert state_text(_inst(InstanceState.RUNNING, exit_code=3)).endswith("exit 3")
