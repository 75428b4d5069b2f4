"""Billing: summary, usage per day and model, ledger, invoices, credits, gift cards, the subscription and the payment portal."""

from __future__ import annotations

from typing import Any

import click

from svc_client.commands.base import (
    State,
    SvcGroup,
    _call_command,
    _list_command,
    examples,
    pass_state,
    yes_option,
)


@click.group(cls=SvcGroup)
def billing() -> None:
    """Billing: summary, usage per day and model, ledger, invoices, buy, redeem, subscribe, portal."""


@billing.command("summary", epilog=examples("svc billing summary", "svc billing summary --json balance,packs"))
@pass_state
def billing_summary(state: State) -> None:
    """Plan, balance, this period's usage and the next charge."""
    with state.client() as svc:
        summary = svc.billing.summary()

    def text(s: Any) -> None:
        state.out.print(f"[bold]plan[/bold]     {s.plan} ({s.subscription.status})"
                        f"{'  [dim]test mode[/dim]' if s.test_mode else ''}")
        state.out.print(f"[bold]balance[/bold]  {s.balance.credits} credits")
        usage = s.usage
        state.out.print(f"[bold]usage[/bold]    {usage.period_start[:10]} to {usage.period_end[:10]}: agent runs "
                        f"{usage.agent_runs.calls} calls, chat {usage.chat.calls} calls, "
                        f"{usage.total_micro_credits / 1_000_000:.6f} credits")
        if s.next_charge:
            charge = s.next_charge
            state.out.print(f"[bold]next[/bold]     {charge.get('at')}: {charge.get('plan')}, "
                            f"{charge.get('amount', 0) / 100:.2f} {str(charge.get('currency', '')).upper()}")
    state.emit(summary, text)


@billing.command("usage", epilog=examples("svc billing usage", "svc billing usage --from 2026-11-01 --to 2026-11-30",
                                          "svc billing usage --json days"))
@click.option("--from", "from_", metavar="YYYY-MM-DD", help="The first UTC day (default: 29 days before --to).")
@click.option("--to", metavar="YYYY-MM-DD", help="The last UTC day, included (default: today).")
@pass_state
def billing_usage(state: State, from_: str | None, to: str | None) -> None:
    """Model calls, tokens and cost per UTC day and model (days without calls are left out)."""
    with state.client() as svc:
        series = svc.billing.usage(from_=from_, to=to)
    if state.json:
        state.emit(series)
        return
    state.err.print(f"[dim]{series.from_} to {series.to}[/dim]")
    state.table(series.days, [("DATE", "date"), ("MODEL", "model"), ("CALLS", "calls"), ("INPUT", "inputTokens"),
                              ("OUTPUT", "outputTokens"), ("MICRO-CREDITS", "microCredits")])


_list_command(billing, "invoices", [("ID", "id"), ("NUMBER", "number"), ("AMOUNT (CENTS)", "amount"),
                                   ("CURRENCY", "currency"), ("STATUS", "status"), ("CREATED", "created_at")],
              lambda svc, **page: svc.billing.invoices(**page), "Invoices, newest first.",
              example=("svc billing invoices", "svc billing invoices --all --json id,amount,status"))
_call_command(billing, "invoice", click.argument("invoice_id"), lambda svc, id: svc.billing.get_invoice(id),
              ["id", "number", "amount", "currency", "status", "lines", "hosted_url", "created_at"], "One invoice.",
              example=("svc billing invoice inv_...",))
_list_command(billing, "ledger", [("ID", "id"), ("KIND", "kind"), ("MICRO-CREDITS", "amount"), ("BY", "principal"),
                                 ("REASON", "reason"), ("AT", "created_at")],
              lambda svc, **page: svc.billing.ledger(**page),
              "Every change of the balance: who, when, why (micro-credits), newest first.",
              example=("svc billing ledger --limit 20", "svc billing ledger --all | awk -F'\\t' '$2 == \"usage\"'"))


@billing.command("buy", epilog=examples("svc billing buy --pack credits_10 --yes",
                                        "svc billing buy --credits 500 --idempotency-key order-42 --yes"))
@click.option("--pack", help="A pack id (see the summary's packs).")
@click.option("--credits", type=int, help="A custom number of credits.")
@click.option("--idempotency-key", help="Default: a new one (give the same to repeat a request safely).")
@yes_option
@pass_state
def billing_buy(state: State, pack: str | None, credits: int | None, idempotency_key: str | None,
                yes: bool) -> None:
    """Buy credits: a pack or a custom amount (it is charged)."""
    if (pack is None) == (credits is None):
        raise click.UsageError("Give exactly one of --pack and --credits.")
    state.confirm(yes, f"Buy {'the pack ' + pack if pack else str(credits) + ' credits'} (it is charged)")
    with state.client() as svc:
        purchase = svc.billing.purchase_credits(pack=pack, credits=credits, idempotency_key=idempotency_key)

    state.emit(purchase, lambda p: state.reveal(f"Purchase {p.id}: {p.status}, {p.credits} credits for "
                                                f"{p.amount / 100:.2f} {p.currency.upper()}.", "Pay at:",
                                                p.checkout_url))


_call_command(billing, "redeem", click.argument("code"), lambda svc, code: svc.billing.redeem_gift_card(code),
              lambda r: f"Redeemed: {r.micro_credits / 1_000_000:.6f} credits; balance {r.balance.credits}.",
              "Redeem a gift card's code.", example=("svc billing redeem GIFT-XXXX-XXXX",))


@billing.command("subscribe", epilog=examples("svc billing subscribe starter --yes",
                                              "svc billing subscribe free --yes"))
@click.argument("plan", type=click.Choice(["free", "starter", "growth", "enterprise"]))
@click.option("--idempotency-key", help="Default: a new one (give the same to repeat a request safely).")
@yes_option
@pass_state
def billing_subscribe(state: State, plan: str, idempotency_key: str | None, yes: bool) -> None:
    """Start or change the subscription (a paid plan is charged; free cancels it)."""
    state.confirm(yes, f"Change the subscription to {plan}" + ("" if plan == "free" else " (it is charged)"))
    with state.client() as svc:
        subscription = svc.billing.create_subscription(plan, idempotency_key=idempotency_key)

    state.emit(subscription, lambda s: state.reveal(
        f"Subscription: {s.plan} ({s.status})" + (f", pending {s.pending_plan}" if s.pending_plan else "") + ".",
        "Pay at:", s.hosted_url))


@billing.command("portal", epilog=examples("svc billing portal",
                                           "open \"$(svc billing portal --json url | jq -r .url)\""))
@pass_state
def billing_portal(state: State) -> None:
    """A page where you manage payment methods and invoices (its address is printed)."""
    with state.client() as svc:
        portal = svc.billing.portal()
    state.emit(portal, lambda p: click.echo(p.url))
