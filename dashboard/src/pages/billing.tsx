/**
 * Settings → Billing, in four tabs, each at its own address (`#/settings/billing`, `?tab=invoices`,
 * `?tab=ledger`, `?tab=plan`) and each reading its data when it is shown:
 * - Overview: the balance, the plan at a glance and this period's usage; buying credits (a pack or an
 *   amount) and redeeming a gift card;
 * - Invoices: the invoices with their lines, a page at a time;
 * - Ledger: every change of the balance, a page at a time;
 * - Plan: the plan and its subscription, changing plan, and the billing portal.
 *
 * A purchase in test mode is settled at once (credited and invoiced); with Stripe it is pending with a
 * checkoutUrl, the page goes to Stripe Checkout, and the balance grows when Stripe's webhook confirms
 * the payment. The results of actions are toasts; their errors stay where the action was.
 */
import type { components } from "@svc/client";
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient, useSigned } from "../api";
import { ConfirmButton } from "../components/confirm";
import { PagedTable } from "../components/paged-table";
import { ErrorNotice, Show } from "../components/status";
import { Credits, Money, Person, ShortId, Time } from "../components/readable";
import { type TabSpec, Tabs } from "../components/tabs";
import { creditsText, money } from "../format";
import { useLoad } from "../load";
import { usePaged } from "../paged";
import { PLACES } from "../places";
import { navigate } from "../router";
import { tabAddress, tabOf } from "../tabs";
import { TableWrap } from "../components/table-wrap";
import { toast } from "../toast";

type Summary = components["schemas"]["BillingSummary"];
type Usage = components["schemas"]["BillingUsage"];
type Invoice = components["schemas"]["BillingInvoice"];
type Plan = components["schemas"]["BillingSubscriptionCreate"]["plan"];

const PLANS: Plan[] = ["free", "starter", "growth", "enterprise"];
const LEDGER_PAGE = 20;

type BillingTab = "overview" | "invoices" | "ledger" | "plan";
const BILLING_TABS: readonly [TabSpec<BillingTab>, ...TabSpec<BillingTab>[]] = [
  { id: "overview", title: "Overview" }, { id: "invoices", title: "Invoices" }, { id: "ledger", title: "Ledger" },
  { id: "plan", title: "Plan" },
];
const TAB_IDS = BILLING_TABS.map((tab) => tab.id) as [BillingTab, ...BillingTab[]];

/** The address of a tab of the billing page. */
function billingAddress(tab: BillingTab): string {
  return tabAddress(PLACES.billing.path, TAB_IDS, tab);
}

function day(iso: string | null | undefined): string {
  return iso ? iso.slice(0, 10) : "—";
}

/** Where the browser goes to pay (Stripe Checkout, a hosted invoice, the portal). */
function go(url: string): void {
  window.location.assign(url);
}

export function BillingPage({ query }: { query: URLSearchParams }) {
  const tab = tabOf(query, TAB_IDS);
  return (
    <>
      <h1>Billing</h1>
      <p class="lead">AI usage is paid in credits (1 credit = 1 USD). Credits are bought, redeemed from gift cards, or
        come with a paid plan each period. <a href={`#${PLACES.usage.path}`}>Usage</a> charts the calls per day and model.</p>
      <Tabs label="Billing" idPrefix="billing" tabs={BILLING_TABS} selected={tab}
            onSelect={(next) => navigate(billingAddress(next))}>
        {tab === "overview" && <OverviewTab />}
        {tab === "invoices" && <InvoicesTab />}
        {tab === "ledger" && <LedgerTab />}
        {tab === "plan" && <PlanTab />}
      </Tabs>
    </>
  );
}

/** A tab made of the billing summary, read when the tab is shown (and again after a change). */
function SummaryTab({ what, children }: {
  what: string; children: (summary: Summary, changed: () => void) => ComponentChildren }) {
  const client = useClient();
  const summary = useLoad(() => client.billing.summary());
  return <Show loaded={summary} what={what}>{(data) => children(data, summary.reload)}</Show>;
}

function OverviewTab() {
  return (
    <SummaryTab what="the billing summary">
      {(summary, changed) => (
        <>
          <Overview summary={summary} />
          <PeriodUsage summary={summary} />
          <BuyCredits summary={summary} bought={changed} />
          <RedeemGiftCard redeemed={changed} />
        </>
      )}
    </SummaryTab>
  );
}

function PlanTab() {
  return (
    <SummaryTab what="the plan">
      {(summary, changed) => (
        <>
          <section class="card" aria-labelledby="current-plan-title">
            <h2 id="current-plan-title">Your plan</h2>
            <PlanFacts summary={summary} />
          </section>
          <ChangePlan summary={summary} changed={changed} />
          <Portal />
        </>
      )}
    </SummaryTab>
  );
}

function Overview({ summary }: { summary: Summary }) {
  return (
    <section class="card" aria-labelledby="balance-title">
      <h2 id="balance-title">Balance</h2>
      <p class="balance"><Credits micro={summary.balance.microCredits} testId="balance" />
        {summary.testMode && <> <span class="badge">test mode</span></>}</p>
      <PlanFacts summary={summary} />
    </section>
  );
}

/** The plan, its subscription, the current period and the next charge; a first invoice to pay. */
function PlanFacts({ summary }: { summary: Summary }) {
  const sub = summary.subscription;
  return (
    <>
      <dl class="billing-facts">
        <div><dt>Plan</dt><dd>{summary.plan}</dd></div>
        <div><dt>Subscription</dt><dd><span class={`badge ${sub.status}`}>{sub.status}</span>
          {sub.pendingPlan && <> ({sub.pendingPlan} waits for its first payment)</>}</dd></div>
        {sub.currentPeriodEnd && <div><dt>Current period</dt>
          <dd>{day(sub.currentPeriodStart)} to {day(sub.currentPeriodEnd)}</dd></div>}
        <div><dt>Next charge</dt><dd>{summary.nextCharge
          ? <><Money cents={summary.nextCharge.amount} currency={summary.nextCharge.currency} /> for {summary.nextCharge.plan}{" "}
            <Time iso={summary.nextCharge.at} /></>
          : "none"}</dd></div>
      </dl>
      {sub.status === "incomplete" && sub.hostedUrl && (
        <p class="warning">The first invoice of {sub.pendingPlan} is not paid yet: <a href={sub.hostedUrl}>pay it</a>.</p>
      )}
    </>
  );
}

function PeriodUsage({ summary }: { summary: Summary }) {
  const usage = summary.usage;
  const row = (name: string, u: Usage) => (
    <tr>
      <th scope="row">{name}</th>
      <td data-label="Calls">{u.calls.toLocaleString("en-US")}</td>
      <td data-label="Input tokens">{u.inputTokens.toLocaleString("en-US")}</td>
      <td data-label="Output tokens">{u.outputTokens.toLocaleString("en-US")}</td>
      <td data-label="Credits"><Credits micro={u.microCredits} bare /></td>
    </tr>
  );
  return (
    <section class="card" aria-labelledby="period-title">
      <h2 id="period-title">This period's usage</h2>
      <p class="muted">{day(usage.periodStart)} to {day(usage.periodEnd)}: <Credits micro={usage.totalMicroCredits} /> in all.</p>
      <TableWrap label={"This period's usage by kind"}>
        <table class="stack">
          <thead><tr><th scope="col">Of</th><th scope="col">Calls</th><th scope="col">Input tokens</th>
            <th scope="col">Output tokens</th><th scope="col">Credits</th></tr></thead>
          <tbody>{row("Agent runs", usage.agentRuns)}{row("Chat", usage.chat)}</tbody>
        </table>
      </TableWrap>
    </section>
  );
}

function BuyCredits({ summary, bought }: { summary: Summary; bought: () => void }) {
  const client = useClient();
  const action = useAction();
  const [choice, setChoice] = useState(summary.packs[0]?.id ?? "amount");
  const [amount, setAmount] = useState("");
  return (
    <section class="card" aria-labelledby="buy-title">
      <h2 id="buy-title">Buy credits</h2>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const purchase = await client.billing.purchaseCredits(
            choice === "amount" ? { credits: Number(amount) } : { pack: choice as "credits_10" });
          if (purchase.status === "pending" && purchase.checkoutUrl) {
            go(purchase.checkoutUrl);   // Stripe Checkout; its webhook credits the balance once paid
            return;
          }
          toast(`Bought ${creditsText(purchase.credits * 1_000_000)} for ${money(purchase.amount, purchase.currency)} (${purchase.status}).`);
          setAmount("");
          bought();
        });
      }}>
        <fieldset>
          <legend>How many</legend>
          <div class="scopes">
            {summary.packs.map((pack) => (
              <label key={pack.id} class="check"><input type="radio" name="pack" value={pack.id}
                                                         checked={choice === pack.id} onChange={() => setChoice(pack.id)} />
                {creditsText(pack.credits * 1_000_000)}, {money(pack.amount, pack.currency)}</label>
            ))}
            <label class="check"><input type="radio" name="pack" value="amount" checked={choice === "amount"}
                                        onChange={() => setChoice("amount")} />Another amount</label>
          </div>
          {choice === "amount" && (
            <label>Credits (5 to 10,000; 1 credit = $1)<input type="number" min={5} max={10000} step={1} required
                                                              value={amount} onInput={(e) => setAmount(e.currentTarget.value)} /></label>
          )}
        </fieldset>
        <button type="submit" class="primary" disabled={action.busy}>{action.busy ? "Buying…" : "Buy credits"}</button>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}

function ChangePlan({ summary, changed }: { summary: Summary; changed: () => void }) {
  const client = useClient();
  const { reload } = useSigned();
  const action = useAction();
  const [plan, setPlan] = useState<Plan>((PLANS.find((p) => p !== summary.plan) ?? "starter"));
  return (
    <section class="card" aria-labelledby="plan-title">
      <h2 id="plan-title">Change plan</h2>
      <p class="muted">A paid plan starts at once and its first period is charged (its price is credited as the
        period's included usage); the current subscription is replaced without proration. Free cancels it.</p>
      <div class="row-actions">
        <label for="plan-choice">Plan</label>
        <select id="plan-choice" value={plan} onChange={(e) => setPlan(e.currentTarget.value as Plan)}>
          {PLANS.map((p) => <option key={p} value={p} disabled={p === summary.plan}>{p}{p === summary.plan ? " (current)" : ""}</option>)}
        </select>
        <ConfirmButton label="Change plan" danger={plan === "free"} disabled={action.busy || plan === summary.plan}
                       question={plan === "free"
                         ? "Move to free? The subscription is canceled and the paid plan's features stop at once."
                         : `Move to ${plan}? Its first period is charged now and replaces the current subscription.`}
                       onConfirm={() => void action.run(async () => {
                         const sub = await client.call("create_subscription", { body: { plan } });
                         toast(sub.status === "incomplete"
                           ? `${plan} waits for its first payment: pay its invoice from Your plan.`
                           : `The plan is now ${sub.plan} (${sub.status}).`);
                         changed();
                         await reload();
                       })} />
      </div>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}

function RedeemGiftCard({ redeemed }: { redeemed: () => void }) {
  const client = useClient();
  const action = useAction();
  const [code, setCode] = useState("");
  return (
    <section class="card" aria-labelledby="gift-title">
      <h2 id="gift-title">Redeem a gift card</h2>
      <form class="row-actions" onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const redemption = await client.call("redeem_gift_card", { body: { code } });
          toast(`Redeemed ${creditsText(redemption.microCredits)}; the balance is ${creditsText(redemption.balance.microCredits)}.`);
          setCode("");
          redeemed();
        });
      }}>
        <label>Gift card code<input required value={code} placeholder="GC-XXXXX-XXXXX-XXXXX-XXXXX" autocomplete="off"
                                    spellcheck={false} onInput={(e) => setCode(e.currentTarget.value)} /></label>
        <button type="submit" disabled={action.busy}>{action.busy ? "Redeeming…" : "Redeem"}</button>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}

function Portal() {
  const client = useClient();
  const action = useAction();
  const [testUrl, setTestUrl] = useState<string | null>(null);
  return (
    <section class="card" aria-labelledby="portal-title">
      <h2 id="portal-title">Payment methods and receipts</h2>
      <p class="muted">The billing portal keeps the payment methods and the provider's receipts.</p>
      <button type="button" disabled={action.busy} onClick={() => void action.run(async () => {
        const portal = await client.call("create_portal_session");
        if (portal.testMode) setTestUrl(portal.url);   // test mode: an address that leads nowhere
        else go(portal.url);
      })}>Open the billing portal</button>
      {testUrl && <p class="notice" role="status">Test mode: the portal session is <code class="secret">{testUrl}</code>,
        an address that leads nowhere, as no payment provider stands behind it.</p>}
      {action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}

function InvoicesTab() {
  const client = useClient();
  const invoices = usePaged((cursor) => client.call("list_invoices", { query: { limit: 10, ...(cursor ? { cursor } : {}) } }));
  return (
    <>
      <h2 class="visually-hidden">Invoices</h2>
      <p class="muted">Each purchase and each paid period of a plan has its invoice, newest first.</p>
      <PagedTable paged={invoices} what="the invoices" empty="No invoices yet: each purchase and paid plan period has one."
                  columns={["Number", "Date", "Period", "Amount", "Status", "Lines"]}
                  row={(invoice) => <InvoiceRow key={invoice.id} invoice={invoice} />} />
    </>
  );
}

function InvoiceRow({ invoice }: { invoice: Invoice }) {
  const [open, setOpen] = useState(false);
  return (
    <tr>
      <th scope="row">{invoice.number}{invoice.testMode && <div class="muted">test mode</div>}</th>
      <td data-label="Date"><Time iso={invoice.created_at} /></td>
      <td data-label="Period">{day(invoice.periodStart)} to {day(invoice.periodEnd)}</td>
      <td data-label="Amount"><Money cents={invoice.amount} currency={invoice.currency} /></td>
      <td data-label="Status"><span class={`badge ${invoice.status}`}>{invoice.status}</span></td>
      <td data-label="Lines">
        <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "Hide lines" : "Show lines"}<span class="visually-hidden"> of invoice {invoice.number}</span></button>
        {open && <InvoiceLines id={invoice.id} />}
      </td>
    </tr>
  );
}

function InvoiceLines({ id }: { id: string }) {
  const client = useClient();
  const invoice = useLoad(() => client.call("get_invoice", { path: { id } }), [id]);
  return (
    <Show loaded={invoice} what="the invoice">
      {(data) => (
        <ul class="lines">
          {data.lines.map((line, i) => (
            <li key={i}>{line.description}: {line.quantity} × {money(line.unitAmount, data.currency)} ={" "}
              {money(line.amount, data.currency)} (<Credits micro={line.microCredits} />, {line.kind})</li>
          ))}
        </ul>
      )}
    </Show>
  );
}

function LedgerTab() {
  const client = useClient();
  const entries = usePaged((cursor) => client.call("list_ledger", { query: { limit: LEDGER_PAGE, ...(cursor ? { cursor } : {}) } }));
  return (
    <>
      <h2 class="visually-hidden">Ledger</h2>
      <p class="muted">Every change of the balance, newest first; entries are never changed or deleted.</p>
      <PagedTable paged={entries} what="the ledger" empty="No entries yet." columns={["Time", "Kind", "Credits", "Reason", "By"]}
                  row={(entry) => (
        <tr key={entry.id}>
          <th scope="row"><Time iso={entry.created_at} /></th>
          <td data-label="Kind"><span class="badge">{entry.kind}</span></td>
          <td data-label="Credits" class={entry.amount < 0 ? "debit" : "credit"}>
            <Credits micro={entry.amount} bare signed /></td>
          <td data-label="Reason">{entry.reason}{entry.reference && <div class="muted"><ShortId id={entry.reference} /></div>}</td>
          <td data-label="By"><Person id={entry.principal} /></td>
        </tr>
      )} />
    </>
  );
}
