/**
 * The first page after sign-in: the tenant at a glance. The first steps while the tenant is still
 * starting, the balance and this period's usage, runs waiting for approval, failing webhook endpoints,
 * the latest events in plain words, and the members and open invitations. Each block reads on its own
 * (its skeleton while it loads, its own error with the request id), and a block the caller's scopes
 * cannot read is not shown.
 */
import type { components } from "@svc/client";
import type { ComponentChildren } from "preact";
import { useMemo, useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient, useSigned } from "../api";
import { CopyValue } from "../components/copy";
import { Credits, Time } from "../components/readable";
import { Sentence } from "../components/sentence";
import { ErrorNotice, Skeleton } from "../components/status";
import { UsageChart } from "../components/usage-chart";
import { collect, type Loaded, useLoad } from "../load";
import { curlLine, firstSteps, heldCall, readableBlocks, waitingRuns, webhookTrouble } from "../overview";
import { useNames } from "../people";
import { PLACES } from "../places";
import { describeEvent } from "../sentences";

type Summary = components["schemas"]["BillingSummary"];

export function Home() {
  const { client, me } = useSigned();
  const blocks = readableBlocks(me.scopes);
  /** One read of the summary for the balance and the usage blocks (read again after a failure). */
  const summary = useMemo(() => {
    let read: Promise<Summary> | undefined;
    return () => (read ??= client.billing.summary().catch((error: unknown) => { read = undefined; throw error; }));
  }, [client]);
  return (
    <>
      <h1>Overview</h1>
      <p>Signed in as <strong>{me.user?.email}</strong> to <strong>{me.tenant.name}</strong>
        {" "}({me.tenant.role}, {me.tenant.plan} plan).</p>
      {blocks.has("firstSteps") && <FirstSteps />}
      <Balance summary={summary} withUsage={blocks.has("usage")} />
      {blocks.has("approvals") && <Approvals />}
      {blocks.has("webhooks") && <FailingWebhooks />}
      {blocks.has("activity") && <Activity />}
      {blocks.has("members") && <Members />}
    </>
  );
}

/** A block of the page: a card named by its heading, busy (with a skeleton) while it loads, its
 * error with the request id and Try again when its read fails. */
function Block<T>({ id, title, loaded, what, busy = false, children }: {
  id: string; title: string; loaded: Loaded<T>; what: string; children: (data: T) => ComponentChildren;
  /** A later part of the block is still loading. */
  busy?: boolean }) {
  return (
    <section class="card overview-block" aria-labelledby={`${id}-title`} aria-busy={loaded.state === "loading" || busy}
             data-testid={id}>
      <h2 id={`${id}-title`}>{title}</h2>
      {loaded.state === "loading" && <Skeleton what={what} />}
      {loaded.state === "failed" && <ErrorNotice error={loaded.error} onRetry={loaded.reload} />}
      {loaded.state === "ready" && children(loaded.data)}
    </section>
  );
}

function today(): string {
  return new Date().toISOString().slice(0, 10);
}

function Balance({ summary, withUsage }: { summary: () => Promise<Summary>; withUsage: boolean }) {
  const client = useClient();
  const balance = useLoad(() => summary());
  const usage = useLoad(async () => {
    if (!withUsage) return null;
    const period = (await summary()).usage;
    const end = period.periodEnd.slice(0, 10);
    const to = end && end < today() ? end : today();
    return client.billing.usage({ from: period.periodStart.slice(0, 10), to });
  });
  return (
    <Block id="balance" title="Balance and usage" loaded={balance} what="the balance" busy={usage.state === "loading"}>
      {(data) => (
        <>
          <p class="balance"><Credits micro={data.balance.microCredits} testId="overview-balance" />
            {data.testMode && <> <span class="badge">test mode</span></>}</p>
          <p class="muted">This period ({data.usage.periodStart.slice(0, 10)} to {data.usage.periodEnd.slice(0, 10)}):
            {" "}<Credits micro={data.usage.totalMicroCredits} /> used on the {data.plan} plan.{" "}
            <a href={`#${PLACES.billing.path}`}>Billing</a>{withUsage && <> · <a href={`#${PLACES.usage.path}`}>Usage</a></>}</p>
          {withUsage && usage.state === "loading" && <Skeleton what="this period's usage" lines={2} />}
          {usage.state === "failed" && <ErrorNotice error={usage.error} onRetry={usage.reload} />}
          {usage.state === "ready" && usage.data && <UsageChart series={usage.data} measure="credits" height={180} />}
        </>
      )}
    </Block>
  );
}

function Approvals() {
  const client = useClient();
  const runs = useLoad(async () => {
    const agents = await collect(client.agents.iterate(), 100);
    const pages = await Promise.all(agents.map(async (agent) => {
      const page = await client.call("list_runs", { path: { id: agent.id }, query: { limit: 25 } });
      return waitingRuns(page.items).map((run) => ({ run, agent: agent.name }));
    }));
    return pages.flat().sort((a, b) => a.run.created_at.localeCompare(b.run.created_at));
  });
  return (
    <Block id="approvals" title="Waiting for approval" loaded={runs} what="the runs waiting for approval">
      {(items) => items.length === 0 ? <p class="muted">No run is waiting for approval.</p> : (
        <ul class="overview-list" aria-label="Runs waiting for approval">
          {items.map(({ run, agent }) => {
            const call = heldCall(run);
            return (
              <li key={run.id}>
                <a href={`#/agents/${run.agentId}/runs/${run.id}`}>{agent}: {run.goal}</a>
                <span class="muted"> {call ? <>asks to run <code>{call}</code>, </> : null}started <Time iso={run.created_at} /></span>
              </li>
            );
          })}
        </ul>
      )}
    </Block>
  );
}

function FailingWebhooks() {
  const client = useClient();
  const webhooks = useLoad(() => collect(client.webhooks.iterate(), 500));
  return (
    <Block id="webhooks" title="Failing webhook endpoints" loaded={webhooks} what="the webhook endpoints">
      {(items) => {
        const failing = items.flatMap((w) => { const trouble = webhookTrouble(w); return trouble ? [{ w, trouble }] : []; });
        if (items.length === 0) return <p class="muted">No endpoints yet. <a href={`#${PLACES.webhooks.path}`}>Register one</a>.</p>;
        if (failing.length === 0) return <p class="muted">All {items.length === 1 ? "1 endpoint is" : `${items.length} endpoints are`} delivering.</p>;
        return (
          <ul class="overview-list" aria-label="Failing endpoints">
            {failing.map(({ w, trouble }) => (
              <li key={w.id}>
                <a href={`#/webhooks/${w.id}`}>{w.url}</a>{" "}
                <span class={`badge ${trouble.state === "disabled" ? "failed" : "warn"}`}>{trouble.state}</span>
                <span class="muted">{trouble.since && <> since <Time iso={trouble.since} /></>}
                  {trouble.reason && <>: {trouble.reason}</>}</span>
              </li>
            ))}
          </ul>
        );
      }}
    </Block>
  );
}

function Activity() {
  const client = useClient();
  const names = useNames();
  const events = useLoad(() => client.call("list_events", { query: { limit: 10 } }));
  return (
    <Block id="activity" title="Recent activity" loaded={events} what="the recent events">
      {(page) => page.items.length === 0 ? <p class="muted">Nothing has happened yet.</p> : (
        <>
          <ul class="overview-list" aria-label="Recent events">
            {page.items.map((event) => {
              const said = describeEvent(event, { people: names });
              return (
                <li key={event.id}>
                  <Sentence said={said} />
                  <span class="muted"> <Time iso={event.timestamp} /></span>
                </li>
              );
            })}
          </ul>
          <p><a href={`#${PLACES.events.path}`}>The event log</a></p>
        </>
      )}
    </Block>
  );
}

function Members() {
  const client = useClient();
  const team = useLoad(async () => {
    const [members, invitations] = await Promise.all([collect(client.members.iterate(), 1000),
                                                      collect(client.invitations.iterate(), 1000)]);
    return { members: members.length, open: invitations.filter((i) => i.status === "pending").length };
  });
  return (
    <Block id="members" title="Members" loaded={team} what="the members">
      {({ members, open }) => (
        <p>{members === 1 ? "1 member" : `${members} members`}, {open === 1 ? "1 open invitation" : `${open} open invitations`}.
          {" "}<a href={`#${PLACES.members.path}`}>Members</a></p>
      )}
    </Block>
  );
}

function FirstSteps() {
  const client = useClient();
  const action = useAction();
  const [made, setMade] = useState<string | null>(null);
  const start = useLoad(async () => {
    const [keys, projects, webhooks] = await Promise.all([
      collect(client.apiKeys.iterate(), 500), client.projects.list({ limit: 1 }),
      client.call("list_webhooks", { query: { limit: 1 } })]);
    return firstSteps({ keys, projects: projects.items.length, webhooks: webhooks.items.length });
  });
  if (start.state === "ready" && !start.data.shown && made === null) return null;
  const curl = curlLine(client.transport.entryUrl, made);
  return (
    <Block id="first-steps" title="First steps" loaded={start} what="the first steps">
      {({ steps }) => (
        <ol class="first-steps">
          {steps.map((step) => (
            <li key={step.name} class={step.done ? "done" : ""}>
              <h3>{step.title} <span class={`badge ${step.done ? "completed" : ""}`}>{step.done ? "Done" : "To do"}</span></h3>
              {step.name === "key" && (made ? (
                <>
                  <p>The key's value is shown this once: copy it now.</p>
                  <CopyValue value={made} label="The new key" />
                </>
              ) : !step.done && (
                <>
                  <p>A key lets a backend or a script call the API as this tenant.</p>
                  <button type="button" class="primary" disabled={action.busy} onClick={() => void action.run(async () => {
                    const key = await client.apiKeys.create({ name: "First key", type: "sdk", environment: "Development" });
                    setMade(key.key);
                    start.reload();
                  })}>Create a key</button>
                  {action.error !== null && <ErrorNotice error={action.error} />}
                  <p class="muted">Or on <a href={`#${PLACES.apiKeys.path}`}>API keys</a>, with a name, scopes and an expiry.</p>
                </>
              ))}
              {step.name === "call" && (
                <>
                  <p>List the tenant's projects from a terminal{made ? "" : " (put your key in its place)"}:</p>
                  <CopyValue value={curl} label="The first call" />
                  {!step.done && <button type="button" onClick={start.reload}>Check again</button>}
                </>
              )}
              {step.name === "project" && !step.done && <p><a href={`#${PLACES.projects.path}`}>Create a project</a>: the files agents and chat work on.</p>}
              {step.name === "webhook" && !step.done && <p><a href={`#${PLACES.webhooks.path}`}>Register an endpoint</a> to hear of each change as it happens.</p>}
            </li>
          ))}
        </ol>
      )}
    </Block>
  );
}
