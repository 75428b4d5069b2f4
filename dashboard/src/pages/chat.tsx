/**
 * Build → Chat: the tenant's sessions; Start session opens a dialog (a title, optionally on a project
 * or as an agent); each session's actions menu opens or deletes it (asked first). A session's page: its messages and a composer; the answer streams in as
 * it is written (its text in a live region, so a screen reader reads it too), with the tools it used,
 * its usage and its error.
 */
import type { ChatMessage, ChatSession } from "@svc/client";
import { useEffect, useRef, useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient } from "../api";
import { type Answer, applyEvent, EMPTY_ANSWER, type ToolUse } from "../chat-answer";
import { Confirm } from "../components/confirm";
import { DialogButton } from "../components/dialog";
import { ActionsMenu } from "../components/menu";
import { EmptyState } from "../components/empty-state";
import { Empty, ErrorNotice, Show } from "../components/status";
import { Credits, Time } from "../components/readable";
import { when } from "../format";
import { collect, useLoad } from "../load";
import { navigate } from "../router";
import { shown } from "../timeline";
import { TableWrap } from "../components/table-wrap";
import { toast } from "../toast";

export function ChatSessionsPage() {
  const client = useClient();
  const sessions = useLoad(() => collect(client.paginate("list_chat_sessions"), 200));
  return (
    <>
      <div class="page-head">
        <h1>Chat</h1>
        <DialogButton label="Start session" title="Start a session">
          {(close) => <CreateSession close={close} />}
        </DialogButton>
      </div>
      <Show loaded={sessions} what="the sessions">
        {(items) => items.length === 0 ? (
          <EmptyState title="No sessions yet" tag="Chat">
            <p>A session is a conversation with the model, or with one of your agents on a project: the answer streams
              in as it is written.</p>
            <p>Press <strong>Start session</strong> above to open the first.</p>
          </EmptyState>
        ) : (
          <TableWrap label={"Sessions"}>
            <table class="stack">
              <thead><tr><th scope="col">Title</th><th scope="col">Updated</th><th scope="col">Actions</th></tr></thead>
              <tbody>{items.map((s) => <SessionRow key={s.id} session={s as ChatSession} changed={sessions.reload} />)}</tbody>
            </table>
          </TableWrap>
        )}
      </Show>
      <p class="lead">Talk to the model, or to one of your agents on a project (its tools act on the project's files).</p>
    </>
  );
}

function title(session: { title: string | null; created_at: string }): string {
  return session.title ?? `Untitled (${when(session.created_at)})`;
}

function SessionRow({ session, changed }: { session: ChatSession; changed: () => void }) {
  const client = useClient();
  const action = useAction();
  const [deleting, setDeleting] = useState(false);
  return (
    <tr>
      <th scope="row"><a href={`#/chat/${session.id}`}>{title(session)}</a></th>
      <td data-label="Updated"><Time iso={session.updated_at} /></td>
      <td><div class="row-actions">
        <ActionsMenu name={title(session)} disabled={action.busy} items={[
          { label: "Open", onSelect: () => navigate(`/chat/${session.id}`) },
          { label: "Delete…", danger: true, onSelect: () => setDeleting(true) },
        ]} />
        <Confirm open={deleting} label="Delete" onClose={() => setDeleting(false)}
                 question={`Delete the session ${title(session)} and its messages? This cannot be undone.`}
                 onConfirm={() => void action.run(async () => {
                   await client.call("delete_chat_session", { path: { id: session.id } });
                   toast(`Session ${title(session)} deleted.`);
                   changed();
                 })} />
        {action.error !== null && <ErrorNotice error={action.error} />}
      </div></td>
    </tr>
  );
}

function CreateSession({ close }: { close: () => void }) {
  const client = useClient();
  const action = useAction();
  const choices = useLoad(async () => {
    const [projects, agents] = await Promise.all([collect(client.projects.iterate()), collect(client.agents.iterate())]);
    return { projects, agents };
  });
  const [name, setName] = useState("");
  const [projectId, setProjectId] = useState("");
  const [agentId, setAgentId] = useState("");
  const projects = choices.state === "ready" ? choices.data.projects : [];
  const agents = choices.state === "ready" ? choices.data.agents : [];
  return (
    <>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const session = await client.chat.createSession({
            ...(name.trim() ? { title: name.trim() } : {}),
            ...(projectId ? { projectId } : {}), ...(agentId ? { agentId } : {}),
          });
          navigate(`/chat/${session.id}`);
        });
      }}>
        <div class="fields">
          <label>Title (optional)<input maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
          <label>Project (optional)<select value={projectId} onChange={(e) => setProjectId(e.currentTarget.value)}>
            <option value="">None</option>
            {projects.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}</select></label>
          <label>Agent (optional)<select value={agentId} onChange={(e) => setAgentId(e.currentTarget.value)}>
            <option value="">None: the plain model</option>
            {agents.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}</select></label>
        </div>
        <div class="actions">
          <button type="button" onClick={close}>Cancel</button>
          <button type="submit" class="primary" disabled={action.busy}>{action.busy ? "Starting…" : "Start session"}</button>
        </div>
      </form>
      {choices.state === "failed" && <ErrorNotice error={choices.error} onRetry={choices.reload} />}
      {action.error !== null && <ErrorNotice error={action.error} />}
    </>
  );
}

type SessionWithMessages = ChatSession & { messages: ChatMessage[]; messagesTruncated: boolean;
                                           projectName?: string; agentName?: string };

export function ChatSessionPage({ params }: { params: Record<string, string> }) {
  const client = useClient();
  const id = params["id"] ?? "";
  const loaded = useLoad(async () => {
    const session = await client.call("get_chat_session", { path: { id } }) as SessionWithMessages;
    // The names of its project and agent (either may have been deleted since: then its id).
    const [project, agent] = await Promise.all([
      session.projectId ? client.projects.get(session.projectId).catch(() => null) : null,
      session.agentId ? client.agents.get(session.agentId).catch(() => null) : null,
    ]);
    return { ...session, projectName: project?.name ?? session.projectId ?? undefined,
             agentName: agent?.name ?? session.agentId ?? undefined };
  }, [id]);
  return (
    <>
      <p><a href="#/chat">← Chat</a></p>
      <Show loaded={loaded} what="the session">
        {(session) => <Conversation session={session} />}
      </Show>
    </>
  );
}

function Conversation({ session }: { session: SessionWithMessages }) {
  const client = useClient();
  const action = useAction();
  const [messages, setMessages] = useState<ChatMessage[]>(session.messages);
  const [answer, setAnswer] = useState<Answer | null>(null);
  // The tools each answer used, as its stream showed them (the stored message keeps its text only).
  const [toolsOf, setToolsOf] = useState<Record<string, ToolUse[]>>({});
  const [content, setContent] = useState("");
  const abort = useRef<AbortController | null>(null);
  useEffect(() => () => abort.current?.abort(), []);

  /** Follow the turn's stream from its first event; then read the stored messages again. */
  const follow = async (firstEventId: number | null) => {
    const controller = new AbortController();
    abort.current = controller;
    let now = EMPTY_ANSWER;
    setAnswer(now);
    const options = { signal: controller.signal, ...(firstEventId ? { lastEventId: String(firstEventId - 1) } : {}) };
    for await (const event of client.chat.stream(session.id, options)) {
      now = applyEvent(now, event);
      setAnswer(now);
    }
    const { messageId, tools } = now;
    if (messageId && tools.length) setToolsOf((all) => ({ ...all, [messageId]: tools }));
    const stored = await collect(client.paginate("list_chat_messages", { path: { id: session.id } }), 1000);
    setMessages(stored as ChatMessage[]);
    setAnswer(null);
  };

  // A turn still in progress when the page opens: follow it.
  useEffect(() => {
    if (session.activeTurn) void action.run(() => follow(session.activeTurn?.firstEventId ?? null));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [session.id]);

  const busy = action.busy || answer !== null;
  return (
    <>
      <h1>{title(session)}</h1>
      {(session.projectId || session.agentId) && <p class="muted">
        {session.agentId && <>Agent: <a href={`#/agents/${session.agentId}`}>{session.agentName}</a>. </>}
        {session.projectId && <>Project: {session.projectName}.</>}</p>}
      {session.messagesTruncated && <p class="muted">Older messages are not shown.</p>}
      {messages.length === 0 && answer === null ? <Empty>No messages yet: write the first below.</Empty> : (
        <ol class="messages" aria-label="Messages">
          {messages.map((m) => <Message key={m.id} message={m} tools={toolsOf[m.id] ?? []} />)}
          {answer && <Streaming answer={answer} />}
        </ol>
      )}
      <form class="composer" onSubmit={(event) => {
        event.preventDefault();
        const text = content;
        void action.run(async () => {
          const sent = await client.chat.send(session.id, text);
          setContent("");
          setMessages((all) => [...all, sent.userMessage as ChatMessage]);
          await follow((sent.assistantMessage as ChatMessage).firstEventId);
        });
      }}>
        <label for="composer">Message</label>
        <textarea id="composer" required rows={3} maxLength={20000} value={content}
                  onInput={(e) => setContent(e.currentTarget.value)}
                  onKeyDown={(e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) e.currentTarget.form?.requestSubmit(); }} />
        <div class="row-actions">
          <button type="submit" class="primary" disabled={busy}>{busy ? "Answering…" : "Send"}</button>
          <span class="muted">Ctrl+Enter sends</span>
        </div>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </>
  );
}

function Usage({ usage }: { usage: { inputTokens: number; outputTokens: number; microCredits: number; estimated: boolean } }) {
  return <p class="muted">{usage.inputTokens} tokens in, {usage.outputTokens} out{usage.estimated ? " (estimated)" : ""},
    {" "}<Credits micro={usage.microCredits} /></p>;
}

function Tools({ tools }: { tools: ToolUse[] }) {
  return (
    <>
      {tools.map((tool) => (
        <details key={tool.toolUseId} class="tool-use">
          <summary>Tool <code>{tool.name}</code> {tool.status ? <span class={`badge ${tool.status}`}>{tool.status}</span> : "running…"}</summary>
          <p class="muted">Input</p><pre class="block">{shown(tool.input)}</pre>
          {tool.result !== null && <><p class="muted">Result</p><pre class="block">{shown(tool.result)}</pre></>}
        </details>
      ))}
    </>
  );
}

function Message({ message, tools }: { message: ChatMessage; tools: ToolUse[] }) {
  return (
    <li class={`message ${message.role}`}>
      <p class="who-said">{message.role === "user" ? "You" : "Assistant"} <span class="muted"><Time iso={message.created_at} /></span>
        {message.status === "failed" && <span class="badge failed">failed</span>}</p>
      <Tools tools={tools} />
      <div class="message-text">{message.content}</div>
      {message.error && <p class="field-error">{message.error.code}: {message.error.message}</p>}
      {message.usage && <Usage usage={message.usage} />}
    </li>
  );
}

function Streaming({ answer }: { answer: Answer }) {
  return (
    <li class="message assistant streaming">
      <p class="who-said">Assistant <span class="muted">{answer.done ? "" : "writing…"}</span></p>
      <div class="message-text" aria-live="polite" data-testid="streaming-answer">{answer.text}</div>
      <Tools tools={answer.tools} />
      {answer.error && <div class="error" role="alert"><p><strong>{answer.error.code}: </strong>{answer.error.message}</p></div>}
      {answer.usage && <Usage usage={answer.usage} />}
    </li>
  );
}
