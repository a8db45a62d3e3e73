"""Azure Cost Management actuals (SupportsBilling): one tag-filtered query, paged, per launch and day."""

from __future__ import annotations

import pytest

from workbench.core.domain.errors import AuthError
from workbench.core.providers.contract import launch_tags
from workbench_azure import billing


def test_billed_cost_per_launch_and_day_for_this_install_only(arm, account, provider, install_id):
    lines = arm.state.config(account.subscription).costs
    for n in range(12):  # 12 days of one launch: more than one page of rows
        lines.append({"day": f"2025-03-{n + 1:02d}", "tags": launch_tags("job-a", install_id), "cost": 10.0 + n})
    lines.append({"day": "2025-03-02", "tags": launch_tags("job-a", install_id), "cost": 0.5})  # same day, summed
    lines.append({"day": "2025-03-02", "tags": {"workbench:owner": install_id}, "cost": 0.25})  # no launch tag
    lines.append({"day": "2025-03-02", "tags": launch_tags("theirs", "another-install"), "cost": 99.0})
    lines.append({"day": "2025-02-27", "tags": launch_tags("job-a", install_id), "cost": 7.0})  # before the period
    costs = provider.actual_costs("2025-03-01", "2025-03-31")
    by_key = {(c.launch_id, c.day): c for c in costs}
    assert len(costs) == 13 and ("theirs", "2025-03-02") not in by_key and ("job-a", "2025-02-27") not in by_key
    assert by_key[("job-a", "2025-03-02")].amount == pytest.approx(11.5)
    assert by_key[("", "2025-03-02")].amount == 0.25
    c = by_key[("job-a", "2025-03-12")]
    assert (c.provider, c.profile, c.currency, c.source, c.amount) == ("azure", "azure-test", "USD",
                                                                       "Azure Cost Management", 21.0)
    pages = [s for s in arm.seen if s.sub == account.subscription and s.path.endswith("/query")]
    assert len(pages) == 2 and all(s.method == "POST" and s.api_version == "2023-03-01" for s in pages)


def test_the_query_asks_for_actual_cost_grouped_by_launch_and_filtered_by_owner():
    body = billing.query_body("inst-1", "2025-01-01", "2025-01-31")
    ds = body["dataset"]
    assert body["type"] == "ActualCost" and ds["granularity"] == "Daily"
    assert ds["grouping"] == [{"type": "TagKey", "name": "workbench:launch"}]
    assert ds["filter"]["tags"] == {"name": "workbench:owner", "operator": "In", "values": ["inst-1"]}
    assert body["timePeriod"] == {"from": "2025-01-01T00:00:00Z", "to": "2025-01-31T23:59:59Z"}


def test_no_permission_for_cost_management_is_an_auth_error(arm, account, make_provider):
    limited = arm.add_client(account, actions=("Microsoft.Resources/*", "Microsoft.Compute/*"))
    with pytest.raises(AuthError, match="Microsoft.CostManagement/query/action"):
        make_provider(acct=limited).actual_costs("2025-01-01", "2025-01-02")
