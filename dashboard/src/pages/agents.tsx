/**
 * Build → Agents: the tenant's agents; Create agent opens a dialog (name, system prompt, and its
 * config: autonomy level, step limit, tools, model); each agent's actions menu opens or deletes it
 * (asked first). An agent's page: its actions menu (delete), its config, a form
 * that runs it on a goal in a project (in the background; the run's page follows it), and its runs.
 */
import type { Agent, components } from "@svc/client";
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient } from "../api";
import { Confirm } from "../components/confirm";
import { DialogButton } from "../components/dialog";
import { ActionsMenu } from "../components/menu";
import { EmptyState } from "../components/empty-state";
import { Empty, ErrorNotice, Show } from "../components/status";
import { Time } from "../components/readable";
import { collect, useLoad } from "../load";
import { navigate } from "../router";
import { TableWrap } from "../components/table-wrap";
import { toast } from "../toast";

type ConfigBody = components["schemas"]["AgentConfigBody"];
type Autonomy = NonNullable<ConfigBody["autonomyLevel"]>;
type Tool = NonNullable<ConfigBody["tools"]>[number];

const AUTONOMY: { value: Autonomy; label: string }[] = [
  { value: "suggest", label: "Suggest: changes are proposed, never made" },
  { value: "supervised", label: "Supervised: each change waits for your approval" },
  { value: "autonomous", label: "Autonomous: changes are made" },
];
/** The tool catalogue (docs/agents-and-runs.md), in its order. */
export const TOOLS: { name: Tool; what: string }[] = [
  { name: "read_project", what: "reads the project" }, { name: "list_files", what: "lists its files" },
  { name: "read_file", what: "reads a file" }, { name: "write_file", what: "creates or overwrites a file (a change)" },
  { name: "read_secret", what: "reads a secret (the model only sees it)" },
];

export function AgentsPage() {
  const client = useClient();
  const agents = useLoad(() => collect(client.agents.iterate()));
  return (
    <>
      <div class="page-head">
        <h1>Agents</h1>
        <DialogButton label="Create agent" title="Create an agent" wide>
          {(close) => <CreateAgent close={close} created={(agent) => navigate(`/agents/${agent.id}`)} />}
        </DialogButton>
      </div>
      <Show loaded={agents} what="the agents">
        {(items) => items.length === 0 ? (
          <EmptyState title="No agents yet" tag="Agents">
            <p>An agent is an assistant with its own prompt, tools and autonomy: run it on a goal in a project and follow
              each step, approving the ones that change files if you wish.</p>
            <p>Press <strong>Create agent</strong> above to make the first; a run needs
              a <a href="#/projects">project</a> too.</p>
          </EmptyState>
        ) : (
          <TableWrap label={"Agents"}>
            <table class="stack">
              <thead><tr><th scope="col">Name</th><th scope="col">Autonomy</th><th scope="col">Tools</th>
                <th scope="col">Created</th><th scope="col">Actions</th></tr></thead>
              <tbody>{items.map((a) => <AgentRow key={a.id} agent={a} changed={agents.reload} />)}</tbody>
            </table>
          </TableWrap>
        )}
      </Show>
      <p class="lead">An agent is an assistant with its own prompt, tools and autonomy. Run it on a goal in a project
        from its page.</p>
    </>
  );
}

function AgentRow({ agent, changed }: { agent: Agent; changed: () => void }) {
  return (
    <tr>
      <th scope="row"><a href={`#/agents/${agent.id}`}>{agent.name}</a></th>
      <td data-label="Autonomy"><span class="badge">{agent.config.autonomyLevel}</span></td>
      <td data-label="Tools">{agent.config.tools.length ? agent.config.tools.join(", ") : "none"}</td>
      <td data-label="Created"><Time iso={agent.created_at} /></td>
      <td><AgentActions agent={agent} offerOpen deleted={changed} /></td>
    </tr>
  );
}

/** An agent's actions menu (a row's: Open too; its page's: Delete only); deleting asks first. */
function AgentActions({ agent, offerOpen = false, deleted }: { agent: Agent; offerOpen?: boolean; deleted: () => void }) {
  const client = useClient();
  const action = useAction();
  const [deleting, setDeleting] = useState(false);
  return (
    <div class="row-actions">
      <ActionsMenu name={agent.name} disabled={action.busy} items={[
        ...(offerOpen ? [{ label: "Open", onSelect: () => navigate(`/agents/${agent.id}`) }] : []),
        { label: "Delete…", danger: true, onSelect: () => setDeleting(true) },
      ]} />
      <Confirm open={deleting} label="Delete" onClose={() => setDeleting(false)}
               question={`Delete the agent ${agent.name}? This cannot be undone.`}
               onConfirm={() => void action.run(async () => {
                 await client.agents.delete(agent.id);
                 toast(`Agent ${agent.name} deleted.`);
                 deleted();
               })} />
      {action.error !== null && <ErrorNotice error={action.error} />}
    </div>
  );
}

function CreateAgent({ close, created }: { close: () => void; created: (agent: Agent) => void }) {
  const client = useClient();
  const action = useAction();
  const [name, setName] = useState("");
  const [prompt, setPrompt] = useState("");
  const [autonomy, setAutonomy] = useState<Autonomy>("suggest");
  const [stepLimit, setStepLimit] = useState("8");
  const [tools, setTools] = useState<Tool[]>(TOOLS.map((t) => t.name));
  const [model, setModel] = useState("");
  return (
    <>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const config: ConfigBody = { autonomyLevel: autonomy, stepLimit: Number(stepLimit),
                                       tools: TOOLS.map((t) => t.name).filter((t) => tools.includes(t)) };
          // Any id the deployment allows (the service checks it and names the allowed ones if not).
          if (model.trim()) config.model = model.trim() as ConfigBody["model"];
          const agent = await client.agents.create({ name, systemPrompt: prompt, config });
          toast(`Agent ${agent.name} created.`);
          created(agent);
        });
      }}>
        <div class="fields">
          <label>Name<input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
          <label>Autonomy<select value={autonomy} onChange={(e) => setAutonomy(e.currentTarget.value as Autonomy)}>
            {AUTONOMY.map((a) => <option key={a.value} value={a.value}>{a.label}</option>)}</select></label>
          <label>Step limit (model calls per run)<input type="number" required min={1} max={25} value={stepLimit}
            onInput={(e) => setStepLimit(e.currentTarget.value)} /></label>
          <label>Model (empty: the default)<input value={model} placeholder="the deployment's default"
            onInput={(e) => setModel(e.currentTarget.value)} /></label>
        </div>
        <label for="agent-prompt">System prompt</label>
        <textarea id="agent-prompt" required rows={4} maxLength={20000} value={prompt}
                  onInput={(e) => setPrompt(e.currentTarget.value)} />
        <fieldset>
          <legend>Tools</legend>
          <div class="scopes">
            {TOOLS.map((tool) => (
              <label key={tool.name} class="check"><input type="checkbox" checked={tools.includes(tool.name)}
                onChange={(e) => setTools(e.currentTarget.checked ? [...tools, tool.name] : tools.filter((t) => t !== tool.name))} />
                <span>{tool.name} <span class="muted">{tool.what}</span></span></label>
            ))}
          </div>
        </fieldset>
        <div class="actions">
          <button type="button" onClick={close}>Cancel</button>
          <button type="submit" class="primary" disabled={action.busy}>{action.busy ? "Creating…" : "Create agent"}</button>
        </div>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </>
  );
}

export function AgentPage({ params }: { params: Record<string, string> }) {
  const client = useClient();
  const id = params["id"] ?? "";
  const loaded = useLoad(async () => {
    const [agent, runs, projects] = await Promise.all([
      client.agents.get(id), collect(client.paginate("list_runs", { path: { id } }), 100),
      collect(client.projects.iterate()),
    ]);
    return { agent, runs, projects };
  }, [id]);
  return (
    <>
      <p><a href="#/agents">← Agents</a></p>
      <Show loaded={loaded} what="the agent">
        {({ agent, runs, projects }) => (
          <>
            <div class="page-head">
              <h1>{agent.name}</h1>
              <AgentActions agent={agent} deleted={() => navigate("/agents")} />
            </div>
            <dl class="facts">
              <dt>Autonomy</dt><dd>{agent.config.autonomyLevel}</dd>
              <dt>Model</dt><dd>{agent.config.model ?? "the deployment's default"}</dd>
              <dt>Step limit</dt><dd>{agent.config.stepLimit}</dd>
              <dt>Tools</dt><dd>{agent.config.tools.join(", ") || "none"}</dd>
            </dl>
            <details><summary>System prompt</summary><pre class="block">{agent.systemPrompt}</pre></details>
            <RunAgent agent={agent} projects={projects} />
            <h2>Runs</h2>
            {runs.length === 0 ? <Empty>No runs yet: run the agent on a goal above.</Empty> : (
              <TableWrap label={"Runs"}>
                <table class="stack">
                  <thead><tr><th scope="col">Goal</th><th scope="col">Status</th><th scope="col">Started</th>
                    <th scope="col">Steps</th></tr></thead>
                  <tbody>{runs.map((run) => (
                    <tr key={run.id}>
                      <th scope="row"><a href={`#/agents/${agent.id}/runs/${run.id}`}>{run.goal.slice(0, 120)}</a></th>
                      <td data-label="Status"><span class={`badge ${run.status}`}>{run.status.replace("_", " ")}</span></td>
                      <td data-label="Started"><Time iso={run.created_at} /></td>
                      <td data-label="Steps">{run.steps.length}</td>
                    </tr>
                  ))}</tbody>
                </table>
              </TableWrap>
            )}
          </>
        )}
      </Show>
    </>
  );
}

function RunAgent({ agent, projects }: { agent: Agent; projects: { id: string; name: string }[] }) {
  const client = useClient();
  const action = useAction();
  const [goal, setGoal] = useState("");
  const [projectId, setProjectId] = useState(projects[0]?.id ?? "");
  if (projects.length === 0) {
    return <section class="card"><h2>Run the agent</h2>
      <Empty>A run works in a project: <a href="#/projects">create a project</a> first.</Empty></section>;
  }
  return (
    <section class="card" aria-labelledby="run-agent-title">
      <h2 id="run-agent-title">Run the agent</h2>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const run = await client.agents.execute(agent.id, goal, projectId, { async: true });
          navigate(`/agents/${agent.id}/runs/${run.id}`);
        });
      }}>
        <div class="fields">
          <label>Project<select value={projectId} onChange={(e) => setProjectId(e.currentTarget.value)}>
            {projects.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}</select></label>
        </div>
        <label for="run-goal">Goal</label>
        <textarea id="run-goal" required rows={3} maxLength={20000} value={goal}
                  placeholder="e.g. Write notes.md with a summary of the project"
                  onInput={(e) => setGoal(e.currentTarget.value)} />
        <button type="submit" class="primary" disabled={action.busy}>{action.busy ? "Starting…" : "Run"}</button>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}
