"""Commands about money and the guards: cost, plan, budget, currency, watch, keep.

Same exit codes as every command (see ``workbench.cli``): 0 ok, 1 input error,
3 a provider could not be asked (the figures are still printed, from the
local ledger), 4 ``watch --once`` left something billing that a guard wanted
ended.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import sys
import time
from typing import Any, Callable

from workbench.core.money import budgets, currency
from workbench.core.money.billing_sync import actual_by, sync_actual_costs, sync_spot_history
from workbench.core.providers.price_snapshot import describe_date
from workbench.core.money.currency import CurrencySettings
from workbench.core.domain.errors import ConfigError, WorkbenchError
from workbench.core.lifecycle.guards import GuardEngine, GuardEvent
from workbench.core.money.planner import Hardware, break_even_hours, compare_costs_from_accounts
from workbench.core.lifecycle.outcome import launch_words, relaunches
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.money.spend import SpendBook, start_of_month, start_of_today
from workbench.cli.cloud import parse_gpu_arg
from workbench.cli.context import CliContext
from workbench.cli.output import (EXIT_BILLING, EXIT_OK, EXIT_PROVIDER, emit_json, err, errors_json, money, print_errors,
                                  print_warning, stale_warning, table)


# -- cost -----------------------------------------------------------------------------------------
def _since(text: str | None, now: float) -> float:
    if not text:
        return start_of_month(now)
    try:
        d = _dt.date.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"--since must be a date like 2026-01-31, not {text!r}") from None
    return time.mktime((d.year, d.month, d.day, 0, 0, 0, 0, 0, -1))


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def cmd_cost(ctx: CliContext, args: argparse.Namespace) -> int:
    now = time.time()
    since = _since(args.since, now)
    since_day = _dt.date.fromtimestamp(since).isoformat()
    errors: list[tuple[str, WorkbenchError]] = []
    if not args.offline:
        errors += reconcile(ctx.accounts).errors
        errors += sync_spot_history(ctx.accounts, now=now)
        errors += sync_actual_costs(ctx.accounts, since_day, now=now)
    store = ctx.store
    book = SpendBook.load(store)
    cur = book.currency
    grouped = book.group(args.by, now, since) if args.by != "day" else dict(book.days_since(since, now))
    actual = actual_by(store, args.by, since_day)
    statuses = budgets.statuses(store, book, now)
    by_scope = {s.budget.scope: s for s in statuses}
    rows: list[dict[str, Any]] = []
    keys = sorted(set(grouped) | set(actual))
    if args.by == "launch":
        keys = sorted(keys, key=lambda k: -(book.launches[k].created_at if k in book.launches else 0))
        again = relaunches(store.all_attempts())
    for key in keys:
        est = grouped.get(key, 0.0)
        act = actual.get(key)
        act_amount = None if act is None else cur.convert(act.amount, act.currency)
        row: dict[str, Any] = {args.by: key, "estimate": _round(est), "actual": _round(act_amount),
                               "difference": None if act_amount is None else _round(act_amount - est),
                               "actual_source": act.source if act else None}
        if args.by == "launch":
            rec = book.launches.get(key)
            st = by_scope.get(budgets.launch_scope(key))
            row.update(name=rec.name if rec else "", where=f"{rec.provider}/{rec.profile}" if rec else "",
                       status=rec.status if rec else "",
                       outcome=launch_words(rec.status, again.get(key)) if rec else "",
                       projected=_round(book.projection(key, now)),
                       budget=None if st is None else st.budget.amount,
                       budget_percent=None if st is None or st.percent is None else round(st.percent, 1))
        rows.append(row)
    actual_total = sum(r["actual"] for r in rows if r["actual"] is not None) if actual else None
    totals = {"estimate": _round(sum(grouped.values())), "actual": _round(actual_total),
              "today": _round(book.total(now, start_of_today(now))), "month": _round(book.total(now, start_of_month(now))),
              "burn_rate_per_hour": _round(book.rate_total(now))}
    note = cur.note({book.currency_of(k) for k in book.entries} or {cur.display})
    if args.json:
        emit_json({"since": since_day, "by": args.by, "currency": cur.display, "currency_note": note,
                   "rows": rows, "totals": totals, "budgets": [s.to_json() for s in statuses],
                   "errors": errors_json(errors)})
    elif args.csv:
        fields = list(rows[0]) if rows else [args.by, "estimate", "actual", "difference", "actual_source"]
        w = csv.DictWriter(sys.stdout, fieldnames=[*fields, "currency"], lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({**r, "currency": cur.display})
        print_errors(errors)
    else:
        _print_cost(args.by, rows, totals, statuses, cur, note, since_day, bool(actual))
        print_errors(errors)
    return EXIT_PROVIDER if errors else EXIT_OK


def _print_cost(by: str, rows: list[dict], totals: dict, statuses: list, cur: CurrencySettings, note: str,
                since_day: str, have_actual: bool) -> None:
    m = lambda v: money(v, cur.display) if v is not None else "-"  # noqa: E731
    headers = {"launch": ["LAUNCH", "NAME", "WHERE", "STATUS", "ESTIMATE"],
               "provider": ["PROVIDER/PROFILE", "ESTIMATE"], "day": ["DAY", "ESTIMATE"]}[by]
    extra = ["ACTUAL", "DIFF"] if have_actual else []
    tail = ["PROJECTED", "BUDGET"] if by == "launch" else []
    out = []
    for r in rows:
        line = [r[by]] + ([r["name"], r["where"], r["outcome"]] if by == "launch" else []) + [m(r["estimate"])]
        if have_actual:
            line += [m(r["actual"]), m(r["difference"])]
        if by == "launch":
            line += [m(r["projected"]), f"{r['budget_percent']:g} % of {m(r['budget'])}" if r["budget"] else "-"]
        out.append(line)
    print(f"spend since {since_day} by {by} ({note})")
    table([*headers, *extra, *tail], out)
    print(f"\nnow {m(totals['burn_rate_per_hour'])}/h · today {m(totals['today'])} · this month "
          f"{m(totals['month'])} · since {since_day} {m(totals['estimate'])}"
          + (f" (billed so far: {m(totals['actual'])})" if totals["actual"] is not None else ""))
    for s in statuses:
        if s.budget.scope == budgets.MONTHLY:
            used = "cannot be checked (no exchange rate)" if s.percent is None else f"{s.percent:.0f} % used"
            print(f"monthly budget {money(s.budget.amount, s.budget.currency)}: {used}")


# -- plan -----------------------------------------------------------------------------------------
def cmd_plan(ctx: CliContext, args: argparse.Namespace) -> int:
    model, count = parse_gpu_arg(args.gpu)
    if model is None:
        raise ConfigError("--gpu needs a model, e.g. V100:8")
    hw = None
    if args.buy_price is not None:
        hw = Hardware(args.buy_price, args.power_kw, args.kwh_price, args.upkeep, args.resale)
    fx = None
    if args.rate is not None:
        fx = CurrencySettings(args.currency or "USD", args.rate)
    result, errors = compare_costs_from_accounts(ctx.accounts, model, count or 1, args.hours, hw,
                                                 use_reference=not args.no_reference, display=args.currency, fx=fx)
    rows = list(result.rows) if args.all else result.summary()
    breakeven = None
    buy = result.cheapest("buy")
    # buying is weighed against the cheapest on-demand row priced in the purchase's own currency
    od = next((r for r in result.rows if r.option == "on-demand" and buy is not None and r.currency == buy.currency),
              None)
    if buy is not None and od is not None:
        used_hw = hw or _reference(model, count or 1)
        if used_hw is not None and used_hw.currency == od.currency:
            breakeven = break_even_hours(used_hw, od.hourly)
    warning = stale_warning([r.price_as_of for r in rows if r.option != "buy"])
    if args.json:
        emit_json({**result.to_json(all_rows=args.all), "break_even_hours_vs_on_demand": breakeven,
                   "currency": args.currency, "warning": warning, "errors": errors_json(errors)})
    else:
        print(f"{count or 1}× {model} for {args.hours:,.0f} h ({args.hours / 24:,.1f} days), cheapest first:")
        table(["OPTION", "PROVIDER", "REGION", "TYPE", "MACHINES", "PER HOUR (ALL)", "TOTAL", "PRICES FROM", "NOTE"],
              [(r.option, r.provider or "-", r.region or "-", r.instance_type or "-", r.machines,
                money(r.hourly, r.currency), money(r.total, r.currency),
                str(describe_date(r.price_as_of)) if r.price_as_of else "-",
                "; ".join(x for x in (r.note, f"converted from {r.original_currency} at your rate"
                                      if r.original_currency else "") if x))
               for r in rows])
        if not rows:
            err(f"no offers of {model} found: add a profile of a provider that has them (`workbench offers`)")
        if hw is None and buy is not None:
            print(f"\nbuy: a reference price ({buy.price_source}, {buy.price_as_of}); add "
                  "--buy-price (and --power-kw, --kwh-price, --upkeep) to compare with your own quote")
        elif hw is None:
            print("\nadd --buy-price (and --power-kw, --kwh-price, --upkeep) to compare with buying the hardware")
        if breakeven is not None:
            print(f"buying beats the cheapest on-demand offer after {breakeven:,.0f} h of use")
        currencies = {r.currency for r in rows}
        if len(currencies) > 1:
            from workbench.core.offers.order import REFERENCE_CNY_PER_USD, user_rate

            rate = user_rate(ctx.accounts)
            print("rows are in their own currency (" + ", ".join(sorted(currencies)) + "), ordered at "
                  f"{rate or REFERENCE_CNY_PER_USD:g} CNY per USD{'' if rate else ' (a reference rate)'}; convert "
                  "them with --currency CNY or --currency USD (your rate: `workbench currency CNY --rate RATE`, "
                  "or --rate)")
        print_warning(warning)
        print_errors(errors)
    return EXIT_PROVIDER if errors and not rows else EXIT_OK


def _reference(model: str, gpus: int) -> Hardware | None:
    from workbench.core.money.planner import reference_hardware

    return reference_hardware(model, gpus)


# -- budgets and currency ---------------------------------------------------------------------------
def cmd_budget(ctx: CliContext, args: argparse.Namespace) -> int:
    store = ctx.store
    enforce = not args.warn_only
    if args.clear:
        scope = budgets.MONTHLY if args.clear == budgets.MONTHLY else budgets.launch_scope(args.clear)
        if not store.clear_budget(scope):
            raise ConfigError(f"no budget {scope!r} is set")
    if args.monthly is not None:
        budgets.set_monthly(store, args.monthly, args.currency, enforce)
    if args.launch or args.amount is not None:
        if not (args.launch and args.amount is not None):
            raise ConfigError("--launch and --amount go together")
        budgets.set_launch(store, args.launch, args.amount, args.currency, enforce)
    statuses = budgets.statuses(store, SpendBook.load(store))
    if args.json:
        emit_json({"budgets": [s.to_json() for s in statuses]})
    elif not statuses:
        print("no budgets set — e.g. workbench budget --monthly 500")
    else:
        table(["BUDGET", "AMOUNT", "SPENT", "USED", "ON 100 %"],
              [(s.budget.scope, money(s.budget.amount, s.budget.currency), money(s.spent, s.budget.currency),
                "-" if s.percent is None else f"{s.percent:.1f} %",
                "tear down" if s.budget.enforce else "warn only") for s in statuses])
    return EXIT_OK


def cmd_currency(ctx: CliContext, args: argparse.Namespace) -> int:
    old = currency.load(ctx.store)
    if args.display or args.rate is not None:
        new = CurrencySettings(args.display or old.display, args.rate if args.rate is not None else old.cny_per_usd)
        if new.display == "CNY" and new.cny_per_usd is None:
            raise ConfigError("showing CNY needs your exchange rate", hint="workbench currency CNY --rate 7.2")
        currency.save(ctx.store, new)
        old = new
    if args.json:
        emit_json({"display": old.display, "cny_per_usd": old.cny_per_usd, "note": old.note({"USD"})})
    else:
        print(old.note({"USD"}))
    return EXIT_OK


# -- guards -----------------------------------------------------------------------------------------
def _print_event(as_json: bool) -> Callable[[GuardEvent], None]:
    def show(ev: GuardEvent) -> None:
        if as_json:
            sys.stdout.write(json.dumps(ev.to_json()) + "\n")
        else:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ev.ts))
            line = f"{stamp} [{ev.guard}] {ev.action} {ev.launch_id}: {ev.message}".replace("  ", " ")
            (sys.stderr if ev.level == "error" else sys.stdout).write(line + "\n")
        sys.stdout.flush()
    return show


def cmd_watch(ctx: CliContext, args: argparse.Namespace) -> int:
    clock = (lambda: args.now) if args.now is not None else time.time
    engine = GuardEngine(ctx.accounts, clock=clock, on_event=_print_event(args.json), finish_grace_s=args.grace)
    recovery = None
    if not args.no_recovery:
        from workbench.cli.recovery import WatchRecovery  # relaunches interrupted launches (their recovery policy)

        recovery = WatchRecovery(ctx, args.json, args.retry)
    if not args.once and not args.json:
        print(f"watching every {args.interval:g} s: budgets, max runtime, idle GPU, finished jobs"
              f"{', recovery of interrupted jobs' if recovery else ''} (Ctrl-C stops watching; machines keep their "
              "own guard)")
    billing_left = False
    try:
        while True:
            events = engine.poll()
            billing_left = any(e.action == "still_billing" for e in events)
            if recovery is not None:
                recovery.poll()
            if args.once:
                break
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return EXIT_OK
    finally:
        if recovery is not None:
            recovery.stop()
    return EXIT_BILLING if billing_left else EXIT_OK


def cmd_keep(ctx: CliContext, args: argparse.Namespace) -> int:
    ctx.store.get_launch(args.launch_id)  # NotFoundError for a typo
    fresh = GuardEngine(ctx.accounts).keep_running(args.launch_id)
    if args.json:
        emit_json({"launch_id": args.launch_id, "kept": True, "already": not fresh})
    else:
        print(f"{args.launch_id} keeps running after its job finished (max runtime, idle and budget guards "
              "still apply; end it with `workbench down`)")
    return EXIT_OK
