/**
 * The signed-in state: one Client on the TypeScript client's browser Session (the access token in
 * memory only, the refresh cookie or the body's refresh token renewing it), the caller's `me`, and
 * the calls that change it (sign in, switch tenant, sign out).
 */
import { type ApiError, Client, type Me, Session, type TokenGrant } from "@svc/client";
import { createContext } from "preact";
import { useContext } from "preact/hooks";

export interface Signed {
  client: Client;
  me: Me;
  /** Read `me` again (after a change to the tenant's name, a new tenant, ...). */
  reload(): Promise<void>;
  switchTenant(tenantId: string): Promise<void>;
  signOut(): Promise<void>;
}

export const SignedContext = createContext<Signed | null>(null);

/** The signed-in state of the page (pages render only inside it). */
export function useSigned(): Signed {
  const signed = useContext(SignedContext);
  if (!signed) throw new Error("useSigned outside a signed-in page");
  return signed;
}

export function useClient(): Client {
  return useSigned().client;
}

/** A Client with a browser session that renews its token from the refresh token, and tells the app
 * when the service answers 401 (the session ended elsewhere, or was revoked). */
export function newClient(apiBaseUrl: string, onUnauthorized: (error: ApiError) => void): Client {
  const session = new Session({
    exchange: async (s): Promise<TokenGrant | null> => {
      try {
        return await s.refresh();
      } catch {
        return null;
      }
    },
    onUnauthorized,
  });
  return new Client({ baseUrl: apiBaseUrl, session, maxRetries: 1 });
}

/** The session of the client (every dashboard client has one). */
export function sessionOf(client: Client): Session {
  if (!client.session) throw new Error("the dashboard's client has no session");
  return client.session;
}
