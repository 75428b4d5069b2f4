/**
 * The command-line device login (the service's interface, "Command-line device login"), for Node tools:
 *
 * 1. a random 32-byte hex `state` and a PKCE verifier with its S256 challenge (RFC 7636);
 * 2. POST /cli/auth/start: loginId, authUrl, verificationCode, interval;
 * 3. `onPrompt` shows the code and the URL to open (the user approves in a browser);
 * 4. GET /cli/auth/status every `interval` seconds until approved (or ended: denied, expired, consumed);
 * 5. POST /cli/auth/token with the verifier: a `svc_cli_` API key, the user and the tenant.
 */

import type { Client } from "./client.js";
import type { DataOf } from "./core.js";

export type DeviceToken = DataOf<"cli_token">;

export interface DeviceLoginOptions {
  /** Show the user where to approve and which code to compare. */
  onPrompt: (prompt: { authUrl: string; verificationCode: string }) => void;
  /** The command-line tool's version and platform, shown on the approval page. */
  cliVersion?: string;
  platform?: string;
  /** Override the service's polling interval (seconds; tests). */
  intervalSeconds?: number;
  signal?: AbortSignal;
}

/** The login ended without a credential. */
export class DeviceLoginFailed extends Error {
  constructor(readonly status: string, readonly reason: string | undefined) {
    super(reason === "denied" || status === "denied" ? "the login was denied in the browser"
      : status === "expired" ? "the login expired before it was approved" : `the login ended as ${status}`);
    this.name = "DeviceLoginFailed";
  }
}

const base64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
  .replace(/=+$/, "");

export async function codeChallenge(verifier: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

function randomBytes(count: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(count));
}

export async function deviceLogin(client: Client, options: DeviceLoginOptions): Promise<DeviceToken> {
  const state = Array.from(randomBytes(32), (b) => b.toString(16).padStart(2, "0")).join("");
  const verifier = base64url(randomBytes(48));   // 64 characters, within PKCE's 43 to 128
  const started = await client.call("cli_start", { body: {
    state, codeChallenge: await codeChallenge(verifier), codeChallengeMethod: "S256",
    cliVersion: options.cliVersion ?? "ts-client", platform: options.platform ?? "node",
  } }) as { loginId: string; authUrl: string; verificationCode: string; interval?: number };
  options.onPrompt({ authUrl: started.authUrl, verificationCode: started.verificationCode });
  const wait = (options.intervalSeconds ?? started.interval ?? 2) * 1000;
  for (;;) {
    const polled = await client.call("cli_status", { query: { loginId: started.loginId }, signal: options.signal }) as
      { status: string; reason?: string };
    if (polled.status === "approved") {
      return client.call("cli_token", { body: { loginId: started.loginId, codeVerifier: verifier } });
    }
    if (polled.status !== "pending") throw new DeviceLoginFailed(polled.status, polled.reason);
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
