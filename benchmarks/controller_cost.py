"""(issue 33) The controller machine's all-in price per hour, per cloud, from the bundled catalog.

Not a timing: each row is one cloud's cheapest controller type in its default region, with its OS disk
and public address (workbench/core/money/controller_cost.py; every figure's source is in
resources/catalog/controller.json and SOURCES.md S4), against the target of at most 0.02 USD/h.
A price in CNY (Alibaba's China-site list) is not converted: the app has no exchange rate of its own
(the user sets one, `workbench currency`), so its row says so instead of a verdict.
"""

from __future__ import annotations

from workbench.core.money.controller_cost import TARGET_USD_PER_H, ControllerCost, targets


def _money(x: float, currency: str) -> str:
    return f"${x:.4f}/h" if currency == "USD" else f"{x:.4f} {currency}/h"


def rows() -> list[tuple[str, str, str, str]]:
    """(measure, value, target, verdict) per cloud."""
    out = []
    for c in targets():
        out.append((_measure(c), _money(c.total_per_h, c.currency), f"<= {TARGET_USD_PER_H} USD/h", _verdict(c)))
    return out


def _measure(c: ControllerCost) -> str:
    parts = " + ".join(f"{p.part} {p.per_h:.4f}" for p in c.parts())
    return (f"controller $/h all-in, {c.provider} {c.region}: {c.instance_type}, {c.disk_gb} GB disk, public "
            f"address ({parts}; oldest price date: {c.as_of})")


def _verdict(c: ControllerCost) -> str:
    met = c.meets_target()
    if met is None:
        return (f"report — {c.currency}, not converted: the app has no exchange rate of its own (set one with "
                "`workbench currency CNY --rate R` to compare)")
    return "met" if met else f"NOT met — {c.total_per_h:.4f} USD/h is over {TARGET_USD_PER_H}"


if __name__ == "__main__":
    for row in rows():
        print(" | ".join(row))
