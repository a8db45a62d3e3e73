"""Spend, budgets, billing rules and sync, currencies, the cost planner."""
