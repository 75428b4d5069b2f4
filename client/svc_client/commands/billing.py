"""Billing."""

from __future__ import annotations

from typing import Any

import click

from svc_client.commands.base import (
    State,
    SvcGroup,
    _call_command,
    _list_command,
    pass_state,
)

# ---- billing ----------------------------------------------------------------------------------

@click.group(cls=SvcGroup)
def billing() -> None:
    """Billing: summary, invoices, buy credits, redeem a gift card."""


@billing.command("summary")
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


_list_command(billing, "invoices", [("ID", "id"), ("NUMBER", "number"), ("AMOUNT (CENTS)", "amount"),
                                   ("CURRENCY", "currency"), ("STATUS", "status"), ("CREATED", "created_at")],
              lambda svc, **page: svc.billing.invoices(**page), "One page of invoices.")


@billing.command("buy")
@click.option("--pack", help="A pack id (see the summary's packs).")
@click.option("--credits", type=int, help="A custom number of credits.")
@click.option("--idempotency-key", help="Default: a new one (give the same to repeat a request safely).")
@pass_state
def billing_buy(state: State, pack: str | None, credits: int | None, idempotency_key: str | None) -> None:
    """Buy credits: a pack or a custom amount."""
    if (pack is None) == (credits is None):
        raise click.UsageError("Give exactly one of --pack and --credits.")
    with state.client() as svc:
        purchase = svc.billing.purchase_credits(pack=pack, credits=credits, idempotency_key=idempotency_key)

    def text(p: Any) -> None:
        state.out.print(f"Purchase {p.id}: {p.status}, {p.credits} credits for {p.amount / 100:.2f} "
                        f"{p.currency.upper()}.")
        if p.checkout_url:
            state.out.print("Pay at:")
            click.echo(p.checkout_url)
    state.emit(purchase, text)


_call_command(billing, "redeem", click.argument("code"), lambda svc, code: svc.billing.redeem_gift_card(code),
              lambda r: f"Redeemed: {r.micro_credits / 1_000_000:.6f} credits; balance {r.balance.credits}.",
              "Redeem a gift card's code.")
