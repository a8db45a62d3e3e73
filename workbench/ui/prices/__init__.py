"""Prices before any account: compare GPUs across clouds (``compare_view``) and plan a job's cost (the
planner lives in ``workbench.ui.money.planner_view``); ``prices_view`` puts both under one nav entry."""
