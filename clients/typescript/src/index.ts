export { Account, Agents, ApiKeys, Billing, Chat, Client, Events, Invitations, Members, Projects, Secrets, Tenants, Webhooks } from "./client.js";
export type { Agent, ApiKey, ChatMessage, ChatSession, Me, Page, Project, Run, SignInSession } from "./client.js";
export {
  API_PREFIX, DEFAULT_MAX_CELL_FOLLOWS, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_TIME_SECONDS, Transport,
} from "./core.js";
export type { CallArgs, CallInput, ClientOptions, DataOf } from "./core.js";
export * from "./errors.js";
export { OPERATIONS } from "./operations.js";
export type { OperationId } from "./operations.js";
export type { components, operations, paths } from "./schema.js";
export { EXPIRY_BUFFER_SECONDS, Session } from "./session.js";
export type { SessionOptions, TokenGrant } from "./session.js";
export type { ChatEvent, StreamEvent, StreamOptions } from "./streams.js";
export { codeChallenge, DeviceLoginFailed, deviceLogin } from "./device.js";
export type { DeviceLoginOptions, DeviceToken } from "./device.js";
