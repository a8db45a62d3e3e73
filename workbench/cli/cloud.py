"""Commands that act on providers: offers, launch, status, down, logs."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from workbench.core import paths
from workbench.core.offers.query import OfferQuery, RankedOffer, interconnect, interconnect_note
from workbench.core.providers.price_snapshot import describe_date
from workbench.core.domain.errors import ConfigError, NotFoundError
from workbench.core.domain.gpus import canonical_gpu, suggest_gpu
from workbench.core.domain.models import Instance, Resource
from workbench.core.domain.queue_words import end_words, queue_reason, reason_words
from workbench.core.lifecycle.outcome import launch_words, relaunches
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.money.billing_status import costs_money, kept_apart, paying, running_here
from workbench.core.money.spend import accrued, burn_rate
from workbench.core.lifecycle.teardown import teardown
from workbench.cli.context import CliContext
from workbench.cli.output import (EXIT_BILLING, EXIT_INPUT, EXIT_OK, EXIT_PROVIDER, duration, emit_json, err, errors_json,
                                  money, print_errors, print_warning, stale_warning, table)

DETACH_WAIT_S = 15 * 60  # launch --detach: how long to wait for the machines to leave "pending"


def _can_confirm(assume_yes: bool) -> None:
    """ConfigError now when a confirmation will be needed and nobody can give it (no terminal)."""
    if not assume_yes and (not sys.stdin or not sys.stdin.isatty()):
        raise ConfigError("confirmation needed but standard input is not a terminal",
                          hint="pass --yes to confirm non-interactively")


def _confirm(question: str, assume_yes: bool) -> bool:
    if assume_yes:
        return True
    _can_confirm(assume_yes)
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


# -- offers -------------------------------------------------------------------
def parse_gpu_arg(value: str) -> tuple[str | None, int | None]:
    model, _, count = value.partition(":")
    canon = None
    if model and model.lower() != "any":
        canon = canonical_gpu(model)
        if canon is None:
            guess = suggest_gpu(model)
            raise ConfigError(f"unknown GPU model {model!r}" + (f" — did you mean {guess}?" if guess else ""))
    n = None
    if count:
        if not count.isdigit() or int(count) < 1:
            raise ConfigError(f"GPU count must be a positive whole number, not {count!r}")
        n = int(count)
    return canon, n if n is not None else (1 if canon else None)


def _price_age(as_of: str) -> tuple[int | None, bool]:
    from workbench.core.providers.price_snapshot import age_days, is_stale

    return age_days(as_of), is_stale(as_of)


def cmd_offers(ctx: CliContext, args: argparse.Namespace) -> int:
    from workbench.core.offers.find import ALWAYS, NEVER, find_offers

    model, count = parse_gpu_arg(args.gpu) if args.gpu else (None, None)
    if args.max_price is not None and args.max_price <= 0:
        raise ConfigError("--max-price must be greater than 0")
    nodes = getattr(args, "nodes", 1) or 1
    if not 1 <= nodes <= 64:
        raise ConfigError(f"--nodes must be 1 to 64, not {nodes}")
    profiles = None
    if args.profile:
        profiles = [ctx.accounts.resolve(args.provider, args.profile)]
    elif args.provider:
        ctx.accounts.resolve(args.provider, None) if args.accounts_only else _known_provider(ctx, args.provider)
    q = OfferQuery(gpu_model=model, gpu_count=count, provider=args.provider, region=args.region,
                   spot=args.spot, max_price=args.max_price)
    result = find_offers(ctx.accounts, q, profiles=profiles,
                         catalog=NEVER if args.accounts_only or args.profile else ALWAYS)
    ranked, errors = result.ranked, result.errors
    if ctx.json:
        rows = []
        for r in ranked:
            age, stale = _price_age(r.offer.prices.hourly_detail(args.spot).as_of)
            rows.append({"profile": r.profile or None, "price_per_hour": r.price, "spot": args.spot,
                         **r.offer.to_json(), "needs_account": r.needs_account, "price_age_days": age,
                         "stale": stale, "nodes": nodes,
                         "price_per_hour_all_nodes": None if r.price is None else r.price * nodes,
                         "interconnect": interconnect(r.offer), "interconnect_note": interconnect_note(r.offer)})
        emit_json({"offers": rows, "errors": errors_json(errors),
                   "catalog_providers": result.catalog_providers,
                   "reason": result.reason.to_json() if result.reason else None,
                   "warning": stale_warning(_price_dates(ranked, args.spot))})
    else:
        def source(r: RankedOffer) -> str:  # where the price the job pays was read, and its own date
            d = r.offer.prices.hourly_detail(args.spot)
            stale = _price_age(d.as_of)[1]
            return f"{r.offer.prices.source} ({describe_date(d.as_of)})" + (" old" if stale else "")

        def note(r: RankedOffer) -> str:
            slow = interconnect_note(r.offer) if nodes > 1 else None
            return "; ".join(x for x in (r.offer.availability_note, slow) if x)

        def price(r: RankedOffer) -> str:
            cur = r.offer.prices.currency
            one = money(r.price, cur)
            return one if nodes == 1 else f"{one} ({money(None if r.price is None else r.price * nodes, cur)})"

        if not ranked:  # the answer is the reason, on stdout: not an empty table
            print(f"no offers match: {result.reason.detail}" if result.reason else "no offers match")
        else:
            table(["PROVIDER", "PROFILE", "REGION", "TYPE", "GPU", "GPU MEM", "vCPU", "RAM", "NETWORK",
                   "PRICE/H" if nodes == 1 else f"PRICE/H (×{nodes})", "SOURCE", "NOTE"],
                  [(r.offer.provider, r.profile or "-", r.offer.region, r.offer.instance_type,
                    f"{r.offer.gpu_count}× {r.offer.gpu_model}" if r.offer.gpu_count else "CPU only",
                    f"{r.offer.gpu_memory_gb:g} GB" if r.offer.gpu_count else "-", r.offer.vcpus,
                    f"{r.offer.memory_gb:.0f} GB", interconnect(r.offer), price(r), source(r), note(r))
                   for r in ranked])
        if result.catalog_providers and ranked:
            names = ", ".join(result.catalog_providers)
            err(f"note: {names} priced from the price catalog (no account of yours answered for them): "
                "compare freely; add an account to launch (`workbench profiles add PROVIDER NAME`)")
        currencies = sorted({r.offer.prices.currency for r in ranked if r.price is not None})
        if len(currencies) > 1:
            from workbench.core.offers.order import REFERENCE_CNY_PER_USD, user_rate

            rate = user_rate(ctx.accounts)
            err(f"note: prices keep their own currency ({', '.join(currencies)}); ordered at "
                + (f"your rate of {rate:g} CNY per USD" if rate else
                   f"{REFERENCE_CNY_PER_USD:g} CNY per USD (set yours: `workbench currency USD --rate RATE`)"))
        print_warning(stale_warning(_price_dates(ranked, args.spot)))
        print_errors(errors)
    if errors and not ranked:
        return EXIT_PROVIDER
    # nothing can match what was asked (16 GPUs on one machine, a price below every offer): an input error
    return EXIT_INPUT if not ranked and result.reason is not None else EXIT_OK


def _price_dates(ranked: list[RankedOffer], spot: bool) -> list[str]:
    """The date of the price each offer is shown at (its spot or on-demand price's own)."""
    return [r.offer.prices.hourly_detail(spot).as_of for r in ranked]


def _known_provider(ctx: CliContext, provider: str) -> None:
    """An unknown --provider is an input error; a known one needs no profile (the catalog prices it)."""
    from workbench.core.providers.price_snapshot import providers as catalog_providers

    if provider not in ctx.accounts.entries and provider not in catalog_providers():
        known = ", ".join(sorted(set(ctx.accounts.entries) | set(catalog_providers())))
        raise NotFoundError(f"unknown provider {provider!r}", hint=f"known providers: {known}")


# -- launch -------------------------------------------------------------------
def cmd_launch(ctx: CliContext, args: argparse.Namespace) -> int:
    from workbench.cli.convert import load_for_launch  # our spec, or a SkyPilot / dstack file

    spec, secret_env, _ = load_for_launch(ctx, args)
    # refused before the summary: it would name a launch id that never comes to exist (issue 29)
    _can_confirm(args.yes)
    from workbench.core.lifecycle.launcher import choose_offer, execute  # launch only: ~45 ms of imports

    lp = choose_offer(ctx.accounts, spec, provider=args.provider, profile=args.profile, region=args.region)
    from workbench.cli import storage as storage_cli  # mounts checked before anything bills
    from workbench.core.lifecycle.launch_storage import check_launch_storage

    storage_plan = check_launch_storage(ctx.accounts, lp)
    o = lp.choice.offer
    cur = o.prices.currency
    if not ctx.json or not args.yes:
        out = sys.stderr if ctx.json else sys.stdout
        gpu = f"{o.gpu_count}× {o.gpu_model}" if o.gpu_count else "no GPU"
        runtime = spec.guards.max_runtime_minutes
        nodes = (f"{lp.num_nodes} machines: " if lp.num_nodes > 1 else "")
        total = (f" per machine, {money(lp.price_per_hour_total, cur)}/h for all {lp.num_nodes}"
                 if lp.num_nodes > 1 else "")
        out.write(f"Launch {lp.launch_id}: {spec.name} on {lp.profile.provider}/{lp.profile.name} "
                  f"{o.region} {nodes}{o.instance_type} ({gpu})\n"
                  f"  price {money(lp.price_per_hour, cur)}/h{total} ({o.prices.source}, "
                  f"{describe_date(o.prices.hourly_detail(lp.spot).as_of)})"
                  f"{' spot' if lp.spot else ''}; max runtime {duration((runtime or 0) * 60)}; "
                  f"projected cost {money(lp.projected_cost, cur)}; on finish: {spec.on_finish.value}\n"
                  + (f"  chosen: {lp.matched}, the {'first with an offer' if spec.choose == 'in_order' else 'cheapest'}"
                     f" of {lp.alternatives + 1} matching offers\n" if lp.matched else ""))
        for line in storage_cli.describe_plan(storage_plan):
            out.write(line + "\n")
        out.flush()
    for w in storage_plan.warnings:
        err(f"warning: {w}")
    if not _confirm("Launch?", args.yes):
        err("cancelled: nothing was launched")
        return EXIT_INPUT
    lp, uploads = storage_cli.upload_for_launch(ctx, lp, storage_plan)
    # --detach: return once the machines are up (the job is started in the background, see remote.py)
    wait_s = DETACH_WAIT_S if getattr(args, "detach", False) else 0.0
    instances = execute(ctx.accounts, lp, secret_env=secret_env, wait_s=wait_s)
    if ctx.json:
        emit_json({"launch": lp.to_json(), "instances": [i.to_json() for i in instances],
                   "storage": storage_plan.to_json(), "uploads": [u.to_json() for u in uploads]})
    else:
        print(f"launch id: {lp.launch_id}")
        _instance_table(instances, {})
        if not getattr(args, "following", False):  # `run` follows it itself: no instruction to do so
            print(f"follow the log: workbench logs {lp.launch_id} --follow")
        sys.stdout.flush()  # a script reading a pipe gets the launch id now, not when the job has started
    return EXIT_OK


# -- status -------------------------------------------------------------------
def _instance_table(instances: list[Instance], spend: dict[tuple[str, str, str], float]) -> None:
    now = time.time()
    table(["INSTANCE", "PROVIDER/PROFILE", "REGION", "TYPE", "GPU", "STATE", "UPTIME", "$/H", "SPEND"],
          [(i.instance_id, f"{i.provider}/{i.profile}", i.region, i.instance_type,
            f"{i.gpu_count}× {i.gpu_model}" if i.gpu_count else "-",
            _state_cell(i),
            duration(now - i.launched_at) if i.launched_at and i.state.active else "-",
            money(i.price_per_hour, i.currency),
            money(spend.get((i.provider, i.profile, i.instance_id), 0.0), i.currency))
           for i in instances])


def _state_cell(i: Instance) -> str:
    """The state, with a scheduler's reason while a job waits in its queue and its end (TIMEOUT) once ended."""
    text = i.state.value
    reason = queue_reason(i.extra)
    if reason is not None and i.state.value == "pending":
        text = f"queued ({reason})"
    elif not i.state.active and end_words(i.extra):
        text += f" ({i.extra.get('slurm_state')})"
    return text + (f" (exit {i.exit_code})" if i.exit_code is not None else "")


def _reconcile_and_leftovers(ctx: CliContext) -> tuple[Any, list[Resource]]:
    """Reconcile the store and list every profile's leftovers in the same round (one fan-out each).

    Leftovers are billable things of ours that no live machine uses (a disk, an address, a
    security group left by a crash before the machine existed): ``status`` shows them too.
    A profile whose leftovers cannot be listed adds its error to the reconcile errors.
    """
    from workbench.core.lifecycle.teardown import _as_error

    result = reconcile(ctx.accounts, leftovers=True)
    leftovers: list[Resource] = [r for found in result.leftovers.values() for r in found]
    for name, exc in result.leftover_errors.items():
        result.errors.append((name, _as_error(exc, f"listing leftovers of {name}")))
    return result, leftovers


def _listing(ctx: CliContext, max_age: float) -> tuple[Any, list[Resource], float, bool]:
    """(reconcile result, leftovers, listed_at, from_cache): from the listing cache when ``max_age``
    allows (then no plugin or SDK is loaded at all), else asked of every profile now."""
    from workbench.core.lifecycle import listing_cache
    from workbench.core.lifecycle.reconcile import ReconcileResult

    profiles = ctx.accounts.profiles()
    cached = listing_cache.recall(ctx.store, profiles, max_age)
    if cached is not None:
        return ReconcileResult(), cached[1], cached[0], True
    started = time.time()
    result, leftovers = _reconcile_and_leftovers(ctx)
    if not result.errors:
        listing_cache.remember(ctx.store, profiles, leftovers, now=started)
    return result, leftovers, started, False


def billing_line(instances: list[Instance]) -> str:
    """"2 billing · 1 running here", "nothing billing · 1 running here": the words of the app's badge."""
    billing, here = len(paying(instances)), len(running_here(instances))
    text = f"{billing} billing" if billing else "nothing billing"
    return text + (f" · {here} running here" if here else "")


def cmd_status(ctx: CliContext, args: argparse.Namespace) -> int:
    result, leftovers, listed_at, cached = _listing(ctx, max(0.0, float(getattr(args, "max_age", 0.0) or 0.0)))
    store = ctx.store
    spend = _spend(ctx)
    launches = store.list_launches()
    everything = store.list_instances()
    by_launch: dict[str, list[Instance]] = {}
    for i in everything:
        by_launch.setdefault(i.launch_id, []).append(i)
    again = relaunches(store.all_attempts())
    if ctx.json:
        out = []
        for rec in launches:
            insts = by_launch.get(rec.launch_id, [])
            out.append({
                "launch_id": rec.launch_id, "name": rec.name, "provider": rec.provider,
                "profile": rec.profile, "region": rec.region, "status": rec.status,
                "created_at": rec.created_at, "error": rec.error, "currency": rec.currency,
                "projected_cost": rec.projected_cost,
                # how the app words it: "interrupted · relaunched as attempt 2" for a preempted attempt
                "outcome": launch_words(rec.status, again.get(rec.launch_id)),
                "relaunched_as": again[rec.launch_id][1] if rec.launch_id in again else None,
                "spend": round(sum(spend.get((i.provider, i.profile, i.instance_id), 0.0) for i in insts), 6),
                "instances": [dict(i.to_json(), spend=round(spend.get((i.provider, i.profile, i.instance_id), 0.0), 6),
                                   billing=costs_money(i)) for i in insts],
            })
        emit_json({"launches": out, "burn_rate": burn_rate(everything),
                   "total_spend": round(sum(spend.values()), 6),
                   "billable": sum(1 for i in everything if i.state.billable),
                   # what costs money (the GUI badge's count: a free job on this computer is not in it)
                   "billing": len(paying(everything)), "running_here": len(running_here(everything)),
                   "recovered": result.recovered, "errors": errors_json(result.errors, store),
                   "leftovers": [r.to_json() for r in leftovers],
                   "listed_at": listed_at, "from_cache": cached})
    else:
        if not launches:
            print("no launches yet — try: workbench launch resources/examples/local-smoke.yaml --yes")
        for rec in launches:
            insts = by_launch.get(rec.launch_id, [])
            total = sum(spend.get((i.provider, i.profile, i.instance_id), 0.0) for i in insts)
            print(f"{rec.launch_id}  {rec.name}  [{launch_words(rec.status, again.get(rec.launch_id))}]  "
                  f"{rec.provider}/{rec.profile}  "
                  f"spend {money(total, rec.currency)}" + (f"  error: {rec.error}" if rec.error else ""))
        if everything:
            print()
            _instance_table(everything, spend)
        if leftovers:
            print("\nleftovers (billable things of ours that no machine uses; `workbench down --all` deletes them):")
            table(["provider/profile", "region", "kind", "id", "launch", "$/h"],
                  [[f"{r.provider}/{r.profile}", r.region, r.kind, r.resource_id, r.launch_id or "-",
                    money(float(r.extra["price_per_hour"])) if r.extra.get("price_per_hour") is not None else "?"]
                   for r in leftovers])
        if cached:
            print(f"\n(as the providers listed it {duration(time.time() - listed_at)} ago: --max-age)")
        print("\n" + billing_line(everything) + f", burn rate {money(burn_rate(everything))}/h, "
              f"total spend {money(sum(spend.values()))}" + (f", {len(leftovers)} leftover(s)" if leftovers else ""))
        for lid in result.recovered:
            err(f"note: launch {lid} was recovered from the provider's tags")
        print_errors(result.errors, store)
    return EXIT_PROVIDER if result.errors else EXIT_OK


def _spend(ctx: CliContext) -> dict[tuple[str, str, str], float]:
    grouped: dict[tuple[str, str, str], list] = {}
    for e in ctx.store.ledger():
        grouped.setdefault((e.provider, e.profile, e.instance_id), []).append(e)
    return {k: accrued(v) for k, v in grouped.items()}


# -- down ---------------------------------------------------------------------
def _thing_json(x: Instance | Resource) -> dict[str, Any]:
    d = x.to_json()
    d["type"] = "instance" if isinstance(x, Instance) else "resource"
    return d


def _own_line(inst: Instance) -> str:
    """A free job on the user's own hardware: where, which, and its state (the queue's reason while it waits)."""
    state = inst.state.value
    reason = queue_reason(inst.extra)
    if reason is not None and inst.state.value == "pending":
        state = f"queued: {reason_words(reason)}"
    where = f"{inst.provider}/{inst.profile}" + (f" ({inst.host})" if inst.host else "")
    return f"{where} {inst.instance_id} ({inst.name or inst.launch_id}): {state}"


def _ask_own(own: list[Instance]) -> bool:
    """On a terminal: end the free jobs on the user's own hardware too?  (Without one: no, they keep running.)"""
    if not sys.stdin or not sys.stdin.isatty():
        return False
    print(f"{len(own)} free job(s) on your own hardware (this computer, your cluster) would end too:")
    for i in own:
        print(f"  {_own_line(i)}")
    try:
        answer = input("They cost nothing; a cancelled cluster job loses its place in the queue. "
                       "End them too? [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def cmd_down(ctx: CliContext, args: argparse.Namespace) -> int:
    if not args.all and not args.launch_ids:
        raise ConfigError("name the launch ids to tear down, or pass --all")
    if args.all and args.launch_ids:
        raise ConfigError("give launch ids or --all, not both")
    ids = None
    if not args.all:
        reconcile(ctx.accounts)  # a launch only the cloud knows (lost store) becomes known here
        for lid in args.launch_ids:
            paths.check_launch_id(lid)
            if ctx.store.find_launch(lid) is None:
                raise NotFoundError(f"unknown launch id {lid!r}",
                                    hint="`workbench status` lists the launches")
        ids = list(args.launch_ids)
    what = "everything this app launched" if ids is None else ", ".join(ids)
    billable = [i for i in ctx.store.list_instances() if i.state.billable and (ids is None or i.launch_id in ids)]
    own = [i for i in billable if kept_apart(i)] if ids is None and not args.include_own else []
    rate = burn_rate(billable)
    if not _confirm(f"Tear down {what} ({len(billable) - len(own)} billable instance(s), {money(rate)}/h)?",
                    args.yes):
        err("cancelled: nothing was changed")
        return EXIT_INPUT
    kept = own if not own or args.yes or not _ask_own(own) else []
    report = teardown(ctx.accounts, ids, timeout=args.timeout, poll=min(2.0, max(0.05, args.timeout / 20)),
                      keep=sorted({i.launch_id for i in kept if i.launch_id}))
    if ctx.json:
        emit_json({"terminated": [i.to_json() for i in report.terminated],
                   "deleted": [r.to_json() for r in report.deleted],
                   "remaining": [_thing_json(x) for x in report.remaining],
                   "errors": errors_json(report.errors, ctx.store), "clean": report.clean,
                   "kept": [i.to_json() for i in kept]})
    else:
        if kept:
            print(f"kept running: {len(kept)} free job(s) on your own hardware (pass --include-own to end them too)")
            for i in kept:
                print(f"  {_own_line(i)}")
        for i in report.terminated:
            print(f"terminated {i.provider}/{i.profile} {i.instance_id} ({i.name})")
        for r in report.deleted:
            print(f"deleted leftover {r.kind} {r.resource_id} ({r.provider}/{r.profile} {r.region})")
        for x in report.remaining:
            ident = x.instance_id if isinstance(x, Instance) else f"{x.kind} {x.resource_id}"
            err(f"STILL BILLING: {x.provider}/{x.profile} {x.region} {ident}")
        print_errors(report.errors, ctx.store)
        if report.clean:
            print("verified: nothing of it is billing any more" if report.terminated or report.deleted
                  else "nothing was billing")
    if report.remaining:
        return EXIT_BILLING
    return EXIT_PROVIDER if report.errors else EXIT_OK


# -- logs ---------------------------------------------------------------------
def cmd_logs(ctx: CliContext, args: argparse.Namespace) -> int:
    lid = paths.check_launch_id(args.launch_id)
    if ctx.store.find_launch(lid) is None:
        raise NotFoundError(f"unknown launch id {lid!r}", hint="`workbench status` lists the launches")
    from workbench.cli import node_logs
    from workbench.core.remote.log_tail import FileTail, NodeLogTail, follow

    # several nodes: prefixed by rank when more than one is printed; one: the job's log as it always was
    ranks = node_logs.chosen_ranks(args, node_logs.launch_nodes(ctx.store, lid))
    tail: FileTail | NodeLogTail = (FileTail(paths.job_log(lid)) if ranks is None
                                    else NodeLogTail(lid, ranks, prefix=len(ranks) > 1))
    out = sys.stdout.buffer
    if not args.follow:
        if not tail.dump(out):
            err(f"no output yet ({paths.job_log(lid) if ranks is None else paths.node_log(lid, ranks[0]).parent})")
        return EXIT_OK

    def running() -> bool:
        reconcile(ctx.accounts, [ctx.accounts.profile(ctx.store.get_launch(lid).profile)])
        return any(i.state.active for i in ctx.store.list_instances(launch_id=lid))

    follow(tail, out, running, lambda: time.sleep(args.interval))
    return EXIT_OK
