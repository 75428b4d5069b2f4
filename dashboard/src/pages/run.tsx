/**
 * An agent's run: its status (read again every second while it is queued or running), the tool call
 * it waits on with Approve and Reject (an optional reason), Cancel while it has not ended, and its
 * timeline: what the model said and asked for, each tool call with input, result and status, times
 * and usage.
 */
import type { Run } from "@svc/client";
import { useEffect, useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient, useSigned } from "../api";
import { ConfirmButton } from "../components/confirm";
import { ErrorNotice, Loading } from "../components/status";
import { Credits, Person, Time } from "../components/readable";
import { duration, isFinal, isMoving, shown, timeline, type TimelineEntry, waitingCall } from "../timeline";

const POLL_MS = 1000;

export function RunPage({ params }: { params: Record<string, string> }) {
  const client = useClient();
  const agentId = params["id"] ?? "";
  const runId = params["runId"] ?? "";
  const [run, setRun] = useState<Run | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [round, setRound] = useState(0);

  // Read the run; again after POLL_MS while it moves by itself.
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      try {
        const now = await client.agents.getRun(agentId, runId);
        if (stopped) return;
        setRun(now);
        setError(null);
        if (isMoving(now.status)) timer = setTimeout(() => void read(), POLL_MS);
      } catch (failure) {
        if (!stopped) setError(failure);
      }
    };
    void read();
    return () => { stopped = true; clearTimeout(timer); };
  }, [agentId, runId, round]);

  const changed = (next: Run) => { setRun(next); if (isMoving(next.status)) setRound((n) => n + 1); };
  return (
    <>
      <p><a href={`#/agents/${agentId}`}>← The agent</a></p>
      <h1>Run</h1>
      {error !== null && <ErrorNotice error={error} onRetry={() => setRound((n) => n + 1)} />}
      {run === null ? (error === null && <Loading what="the run" />) : <RunView run={run} changed={changed} />}
    </>
  );
}

function RunView({ run, changed }: { run: Run; changed: (run: Run) => void }) {
  const entries = timeline(run);
  const waiting = waitingCall(entries);
  return (
    <>
      <p class="goal"><strong>Goal:</strong> {run.goal}</p>
      <dl class="facts">
        <dt>Status</dt>
        <dd><span class={`badge ${run.status}`} role="status" aria-live="polite">{run.status.replace("_", " ")}</span>
          {isMoving(run.status) && <span class="muted"> (updated every second)</span>}</dd>
        <dt>Model</dt><dd>{run.model}</dd>
        <dt>Started</dt><dd><Time iso={run.created_at} /></dd>
        <dt>Ended</dt><dd><Time iso={run.completed_at} never="not yet" /></dd>
        <dt>Usage</dt><dd>{run.usage.inputTokens} tokens in, {run.usage.outputTokens} out, <Credits micro={run.usage.microCredits} /></dd>
      </dl>
      {run.error && <div class="error" role="alert"><p><strong>{run.error.code}: </strong>{run.error.message}</p></div>}
      {waiting && <Approval run={run} call={waiting} changed={changed} />}
      {!isFinal(run.status) && <CancelRun run={run} changed={changed} />}
      {run.output && <section class="card" aria-labelledby="output-title">
        <h2 id="output-title">Output</h2><pre class="block">{run.output}</pre></section>}
      <h2>Timeline</h2>
      {entries.length === 0 ? <p class="muted">No steps yet.</p> : (
        <ol class="timeline" aria-label="Timeline">
          {entries.map((entry) => <Step key={entry.index} entry={entry} />)}
        </ol>
      )}
    </>
  );
}

function Approval({ run, call, changed }: { run: Run; call: TimelineEntry; changed: (run: Run) => void }) {
  const client = useClient();
  const action = useAction();
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState("");
  const path = { id: run.agentId, run_id: run.id };
  return (
    <section class="card approval" aria-labelledby="approval-title">
      <h2 id="approval-title">Waiting for your approval</h2>
      <p>The agent wants to run <strong>{call.title}</strong> with:</p>
      <pre class="block">{shown(call.input)}</pre>
      {rejecting ? (
        <form onSubmit={(event) => {
          event.preventDefault();
          void action.run(async () => {
            changed(await client.call("reject_run", { path, body: reason.trim() ? { reason: reason.trim() } : {} }) as Run);
          });
        }}>
          <label for="reject-reason">Reason (optional, the model reads it)</label>
          <textarea id="reject-reason" rows={2} maxLength={1000} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
          <div class="row-actions">
            <button type="submit" class="danger" disabled={action.busy}>Reject the call</button>
            <button type="button" onClick={() => setRejecting(false)}>Back</button>
          </div>
        </form>
      ) : (
        <div class="row-actions">
          <button type="button" class="primary" disabled={action.busy} onClick={() => void action.run(async () => {
            changed(await client.call("approve_run", { path, body: {} }) as Run);
          })}>Approve</button>
          <button type="button" disabled={action.busy} onClick={() => setRejecting(true)}>Reject…</button>
        </div>
      )}
      {action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}

function CancelRun({ run, changed }: { run: Run; changed: (run: Run) => void }) {
  const client = useClient();
  const action = useAction();
  return (
    <div class="row-actions">
      <ConfirmButton label="Cancel run" disabled={action.busy || run.cancelRequested}
                     question="Cancel this run? It stops before its next model call or tool; what it did stays."
                     onConfirm={() => void action.run(async () => {
                       changed(await client.call("cancel_run", { path: { id: run.agentId, run_id: run.id } }) as Run);
                     })} />
      {run.cancelRequested && <span class="muted">Cancel asked: the run stops before its next step.</span>}
      {action.error !== null && <ErrorNotice error={action.error} />}
    </div>
  );
}

function Step({ entry }: { entry: TimelineEntry }) {
  const { me } = useSigned();
  return (
    <li class={`step ${entry.kind}${entry.waiting ? " waiting" : ""}`}>
      <div class="step-head">
        <strong>{entry.kind === "tool" ? <>Tool <code>{entry.title}</code></> : entry.title}</strong>
        {entry.status && <span class={`badge ${entry.status}`}>{entry.status.replace("_", " ")}</span>}
        <span class="muted"><Time iso={entry.at} never="" />{entry.tookMs !== null ? ` · ${duration(entry.tookMs)}` : ""}
          {entry.usage ? ` · ${entry.usage.inputTokens} in / ${entry.usage.outputTokens} out tokens` : ""}</span>
      </div>
      {entry.text && <p class="step-text">{entry.text}</p>}
      {entry.asked.length > 0 && <p class="muted">Asked for: {entry.asked.map((a) => a.name).join(", ")}</p>}
      {entry.kind === "tool" && (
        <>
          <details open={entry.waiting}><summary>Input</summary><pre class="block">{shown(entry.input)}</pre></details>
          {entry.result !== null && entry.result !== "" && <details><summary>Result</summary><pre class="block">{shown(entry.result)}</pre></details>}
        </>
      )}
      {entry.approval && <p class="muted">{entry.approval.decision} by {entry.approval.by === me.user?.id ? "you" : <Person id={entry.approval.by} />} <Time iso={entry.approval.at} />
        {entry.approval.reason ? `: ${entry.approval.reason}` : ""}</p>}
    </li>
  );
}
