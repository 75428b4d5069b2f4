/**
 * The client: `call(operationId, ...)` for every operation of the document, and resources per area
 * for the everyday ones (as the Python client has them), with cursor pages as async iterators and
 * the streams as async iterators of typed events.
 */

import { type CallArgs, type ClientOptions, type DataOf, Transport } from "./core.js";
import type { OperationId } from "./operations.js";
import type { components } from "./schema.js";
import { Session } from "./session.js";
import { type ChatEvent, type StreamEvent, type StreamOptions, streamEvents } from "./streams.js";

type Schemas = components["schemas"];
export type Project = Schemas["Project"];
export type Agent = Schemas["Agent"];
export type Run = Schemas["Run"];
export type ChatSession = Schemas["ChatSession"];
export type ChatMessage = Schemas["ChatMessage"];
export type ApiKey = Schemas["ApiKey"];
export type Me = Schemas["Me"];
export type SignInSession = Schemas["SignInSession"];

/** A page of a list: its items and the cursor of the next page (null: the last). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

type PageOperation = {
  [Id in OperationId]: DataOf<Id> extends { items: unknown[]; nextCursor?: string | null } ? Id : never
}[OperationId];
type ItemOf<Id extends OperationId> = DataOf<Id> extends { items: (infer T)[] } ? T : never;

export class Client {
  readonly transport: Transport;
  readonly session: Session | undefined;
  readonly projects: Projects;
  readonly agents: Agents;
  readonly chat: Chat;
  readonly apiKeys: ApiKeys;
  readonly events: Events;
  readonly webhooks: Webhooks;
  readonly secrets: Secrets;
  readonly tenants: Tenants;
  readonly members: Members;
  readonly invitations: Invitations;
  readonly billing: Billing;
  readonly account: Account;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.session = options.session;
    if (this.session) {
      // The session's own calls (login, refresh, exchange, logout) carry no session token of their
      // own making and never run the exchange: a bare transport, with the browser's credentials. It
      // keeps the account's cell (which holds the session; a 421 there is followed as any), apart
      // from the tenant's where the other calls go.
      const bare = new Transport({ ...options, session: undefined, apiKey: undefined, credentials: "include",
                                   onMoved: undefined });
      this.session.transport = {
        post: async (path, body, bearer) => {
          const before = bare.baseUrl;
          const answer = await bare.send("POST", path, { body, headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });
          // A login served by another cell (the account's): the tenant's calls start there too while
          // they know no other cell (the workspace made with the account lives there; the entry's
          // directory may not know a new tenant yet).
          if (path === "/auth/login" && bare.baseUrl !== before && this.transport.baseUrl === this.transport.entryUrl) {
            this.transport.useCell(bare.baseUrl);
          }
          return await answer.response.json() as { data: unknown };
        },
      };
    }
    this.projects = new Projects(this);
    this.agents = new Agents(this);
    this.chat = new Chat(this);
    this.apiKeys = new ApiKeys(this);
    this.events = new Events(this);
    this.webhooks = new Webhooks(this);
    this.secrets = new Secrets(this);
    this.tenants = new Tenants(this);
    this.members = new Members(this);
    this.invitations = new Invitations(this);
    this.billing = new Billing(this);
    this.account = new Account(this);
  }

  /** Any operation of the document by its operationId, typed from the document. */
  call<Id extends OperationId>(operationId: Id, ...args: CallArgs<Id>): Promise<DataOf<Id>> {
    return this.transport.call(operationId, ...args);
  }

  /** Every item of a list operation, page after page (the cursor followed until it ends). */
  async* paginate<Id extends PageOperation>(operationId: Id, ...args: CallArgs<Id>): AsyncGenerator<ItemOf<Id>> {
    const input = { ...(args[0] ?? {}) } as { query?: Record<string, unknown> };
    let cursor: string | null | undefined;
    do {
      const query = { ...(input.query ?? {}), ...(cursor ? { cursor } : {}) };
      const page = await this.transport.call(operationId, ...([{ ...input, query }] as unknown as CallArgs<Id>)) as
        unknown as Page<ItemOf<Id>>;
      yield* page.items;
      cursor = page.nextCursor;
    } while (cursor);
  }

  /** Who the credential is: user (or null for an API key), tenant, scopes. */
  me(): Promise<Me> {
    return this.call("me") as Promise<Me>;
  }
}

class Resource {
  constructor(protected readonly client: Client) {}
}

export class Projects extends Resource {
  create(body: Schemas["ProjectCreate"]): Promise<Project> {
    return this.client.call("create_project", { body }) as Promise<Project>;
  }
  get(id: string): Promise<Project> {
    return this.client.call("get_project", { path: { id } }) as Promise<Project>;
  }
  update(id: string, body: Schemas["ProjectUpdate"]): Promise<Project> {
    return this.client.call("update_project", { path: { id }, body }) as Promise<Project>;
  }
  delete(id: string): Promise<unknown> {
    return this.client.call("delete_project", { path: { id } });
  }
  list(query: { limit?: number; cursor?: string } = {}): Promise<Page<Project>> {
    return this.client.call("list_projects", { query }) as Promise<Page<Project>>;
  }
  iterate(query: { limit?: number } = {}): AsyncGenerator<Project> {
    return this.client.paginate("list_projects", { query }) as AsyncGenerator<Project>;
  }
}

export class Agents extends Resource {
  create(body: Schemas["AgentCreate"]): Promise<Agent> {
    return this.client.call("create_agent", { body }) as Promise<Agent>;
  }
  get(id: string): Promise<Agent> {
    return this.client.call("get_agent", { path: { id } }) as Promise<Agent>;
  }
  delete(id: string): Promise<unknown> {
    return this.client.call("delete_agent", { path: { id } });
  }
  iterate(): AsyncGenerator<Agent> {
    return this.client.paginate("list_agents") as AsyncGenerator<Agent>;
  }
  /** Run the agent on a goal in a project (async: queued, read it back with getRun). */
  execute(id: string, goal: string, projectId: string, options: { async?: boolean } = {}): Promise<Run> {
    return this.client.call("execute_agent", { path: { id }, body: { goal, projectId, ...options } }) as Promise<Run>;
  }
  getRun(id: string, runId: string): Promise<Run> {
    return this.client.call("get_run", { path: { id, run_id: runId } }) as Promise<Run>;
  }
}

export class Chat extends Resource {
  createSession(body: Schemas["ChatSessionCreate"] = {}): Promise<ChatSession> {
    return this.client.call("create_chat_session", { body }) as Promise<ChatSession>;
  }
  getSession(id: string): Promise<unknown> {
    return this.client.call("get_chat_session", { path: { id } });
  }
  /** Send a message: the turn starts; follow it with stream(). */
  send(sessionId: string, content: string, projectId?: string): Promise<DataOf<"send_chat_message">> {
    return this.client.call("send_chat_message", { path: { id: sessionId },
                                                   body: projectId ? { content, projectId } : { content } });
  }
  /** The session's answer as typed events, resumed with Last-Event-ID if the connection drops; ends after `done`. */
  stream(sessionId: string, options: StreamOptions = {}): AsyncGenerator<ChatEvent> {
    const path = this.client.transport.fill("/chat/sessions/{id}/stream", { id: sessionId });
    return streamEvents<ChatEvent>(this.client.transport, path, options, (event) => event.event === "done");
  }
  /** A 5-minute token for the stream's URL, for EventSource (which cannot send a header). */
  streamToken(sessionId: string): Promise<DataOf<"issue_stream_token">> {
    return this.client.call("issue_stream_token", { path: { id: sessionId } });
  }
}

export class ApiKeys extends Resource {
  create(body: Schemas["ApiKeyCreate"]): Promise<DataOf<"create_key">> {
    return this.client.call("create_key", { body });
  }
  revoke(id: string): Promise<unknown> {
    return this.client.call("revoke_key", { path: { id } });
  }
  iterate(): AsyncGenerator<ApiKey> {
    return this.client.paginate("list_keys") as AsyncGenerator<ApiKey>;
  }
}

type Body<Id extends OperationId> = CallArgs<Id>[0] extends infer I ? (I extends { body?: infer B } ? B : never) : never;

export class Webhooks extends Resource {
  create(body: Body<"create_webhook">): Promise<DataOf<"create_webhook">> {
    return this.client.call("create_webhook", { body: body! });
  }
  get(id: string): Promise<DataOf<"get_webhook">> {
    return this.client.call("get_webhook", { path: { id } });
  }
  update(id: string, body: Body<"update_webhook">): Promise<DataOf<"update_webhook">> {
    return this.client.call("update_webhook", { path: { id }, body: body! });
  }
  delete(id: string): Promise<DataOf<"delete_webhook">> {
    return this.client.call("delete_webhook", { path: { id } });
  }
  iterate(): AsyncGenerator<ItemOf<"list_webhooks">> {
    return this.client.paginate("list_webhooks");
  }
  iterateDeliveries(id: string): AsyncGenerator<ItemOf<"list_webhook_deliveries">> {
    return this.client.paginate("list_webhook_deliveries", { path: { id } });
  }
  /** Send a test event to the endpoint now. */
  test(id: string): Promise<DataOf<"test_webhook">> {
    return this.client.call("test_webhook", { path: { id } });
  }
  rotateSecret(id: string): Promise<DataOf<"rotate_webhook_secret">> {
    return this.client.call("rotate_webhook_secret", { path: { id } });
  }
}

export class Secrets extends Resource {
  create(body: Body<"create_secret">): Promise<DataOf<"create_secret">> {
    return this.client.call("create_secret", { body: body! });
  }
  get(id: string): Promise<DataOf<"get_secret">> {
    return this.client.call("get_secret", { path: { id } });
  }
  update(id: string, body: Body<"update_secret">): Promise<DataOf<"update_secret">> {
    return this.client.call("update_secret", { path: { id }, body: body! });
  }
  delete(id: string): Promise<DataOf<"delete_secret">> {
    return this.client.call("delete_secret", { path: { id } });
  }
  iterate(): AsyncGenerator<ItemOf<"list_secrets">> {
    return this.client.paginate("list_secrets");
  }
}

export class Tenants extends Resource {
  create(body: Body<"create_tenant">): Promise<DataOf<"create_tenant">> {
    return this.client.call("create_tenant", { body: body! });
  }
  get(id: string): Promise<DataOf<"get_tenant">> {
    return this.client.call("get_tenant", { path: { id } });
  }
  updateSettings(id: string, body: Body<"update_settings">): Promise<DataOf<"update_settings">> {
    return this.client.call("update_settings", { path: { id }, body: body! });
  }
  iterate(): AsyncGenerator<ItemOf<"list_tenants">> {
    return this.client.paginate("list_tenants");
  }
}

export class Members extends Resource {
  iterate(): AsyncGenerator<ItemOf<"list_members">> {
    return this.client.paginate("list_members");
  }
  changeRole(userId: string, body: Body<"change_member_role">): Promise<DataOf<"change_member_role">> {
    return this.client.call("change_member_role", { path: { userId }, body: body! });
  }
  remove(userId: string): Promise<DataOf<"remove_member">> {
    return this.client.call("remove_member", { path: { userId } });
  }
  leave(): Promise<DataOf<"leave_tenant">> {
    return this.client.call("leave_tenant");
  }
}

export class Invitations extends Resource {
  create(body: Body<"create_invitation">): Promise<DataOf<"create_invitation">> {
    return this.client.call("create_invitation", { body: body! });
  }
  iterate(): AsyncGenerator<ItemOf<"list_invitations">> {
    return this.client.paginate("list_invitations");
  }
  revoke(id: string): Promise<DataOf<"revoke_invitation">> {
    return this.client.call("revoke_invitation", { path: { id } });
  }
  resend(id: string): Promise<DataOf<"resend_invitation">> {
    return this.client.call("resend_invitation", { path: { id } });
  }
}

export class Billing extends Resource {
  summary(): Promise<DataOf<"get_summary">> {
    return this.client.call("get_summary");
  }
  /** Metered model calls summed per UTC day and model, `from` to `to` (YYYY-MM-DD, both included; default: the 30 days to today). */
  usage(query: { from?: string; to?: string } = {}): Promise<DataOf<"get_usage_series">> {
    return this.client.call("get_usage_series", { query });
  }
  purchaseCredits(body: Body<"purchase_credits">): Promise<DataOf<"purchase_credits">> {
    return this.client.call("purchase_credits", { body: body! });
  }
  iterateLedger(): AsyncGenerator<ItemOf<"list_ledger">> {
    return this.client.paginate("list_ledger");
  }
  iterateInvoices(): AsyncGenerator<ItemOf<"list_invoices">> {
    return this.client.paginate("list_invoices");
  }
}

/** The signed-in user's own account: password, sessions, name (a user's token; an API key is refused, 403
 * user_required). A forgotten password is the session's (`Session.forgotPassword`, `resetPassword`): those
 * calls need no sign-in. */
export class Account extends Resource {
  /** A new password; every other session of the account ends, this one stays. A wrong current password is
   * Forbidden (details.reason current_password_wrong) and counts as a failed sign-in. */
  changePassword(currentPassword: string, newPassword: string): Promise<DataOf<"change_password">> {
    return this.client.call("change_password", { body: { currentPassword, newPassword } });
  }
  /** The open sessions, newest first; `current` marks the caller's. */
  sessions(query: { limit?: number; cursor?: string } = {}): Promise<Page<SignInSession>> {
    return this.client.call("list_sessions", { query }) as Promise<Page<SignInSession>>;
  }
  iterateSessions(query: { limit?: number } = {}): AsyncGenerator<SignInSession> {
    return this.client.paginate("list_sessions", { query }) as AsyncGenerator<SignInSession>;
  }
  /** End one session (NotFound for another user's); ending the caller's own is a sign-out. */
  endSession(id: string): Promise<DataOf<"end_session">> {
    return this.client.call("end_session", { path: { id } });
  }
  /** Sign out everywhere else: every session but the caller's. */
  endOtherSessions(): Promise<DataOf<"end_other_sessions">> {
    return this.client.call("end_other_sessions");
  }
  /** The user's name; answers as me(). */
  updateProfile(body: Body<"update_me">): Promise<Me> {
    return this.client.call("update_me", { body: body! }) as Promise<Me>;
  }
}

export class Events extends Resource {
  /** The tenant's events as they happen (the event stream), resumed with Last-Event-ID; never ends by itself. */
  stream(options: StreamOptions = {}): AsyncGenerator<StreamEvent> {
    return streamEvents<StreamEvent>(this.client.transport, "/events/stream", options, () => false);
  }
}

export { Session };
