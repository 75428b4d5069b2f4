/**
 * The application: config, then the session (a silent refresh first: the refresh cookie of an
 * earlier sign-in, same site only), then the shell with the navigation, the tenant switcher and the
 * page of the location's hash.
 */
import type { Client, Me } from "@svc/client";
import { useEffect, useMemo, useState } from "preact/hooks";

import { newClient, sessionOf, type Signed, SignedContext, useSigned } from "./api";
import { ErrorNotice, Loading } from "./components/status";
import { type DashboardConfig, loadConfig } from "./config";
import { SignIn } from "./pages/sign-in";
import { match, useLocation } from "./router";
import { ROUTES } from "./routes";

type State =
  | { phase: "starting" }
  | { phase: "failed"; error: unknown }
  | { phase: "signed-out"; client: Client; notice?: string }
  | { phase: "signed-in"; client: Client; me: Me };

export function App({ config }: { config?: DashboardConfig }) {
  const [state, setState] = useState<State>({ phase: "starting" });

  useEffect(() => {
    let client: Client;
    const start = async () => {
      const settings = config ?? await loadConfig();
      client = newClient(settings.apiBaseUrl, () => setState((now) =>
        now.phase === "signed-in" ? { phase: "signed-out", client, notice: "Your session ended: sign in again." } : now));
      try {
        await sessionOf(client).refresh();   // the cookie of an earlier sign-in (same site only)
        setState({ phase: "signed-in", client, me: await client.me() });
      } catch {
        setState({ phase: "signed-out", client });
      }
    };
    start().catch((error: unknown) => setState({ phase: "failed", error }));
  }, [config]);

  if (state.phase === "starting") return <main id="main"><Loading what="the dashboard" /></main>;
  if (state.phase === "failed") return <main id="main"><h1>The dashboard could not start</h1><ErrorNotice error={state.error} /></main>;
  if (state.phase === "signed-out") {
    const { client, notice } = state;
    return (
      <>
        {notice && <p class="notice" role="status">{notice}</p>}
        <SignIn onSignIn={async (email, password) => {
          await sessionOf(client).login(email, password);
          setState({ phase: "signed-in", client, me: await client.me() });
        }} />
      </>
    );
  }
  return <Shell client={state.client} me={state.me}
                setMe={(me) => setState({ phase: "signed-in", client: state.client, me })}
                signedOut={() => setState({ phase: "signed-out", client: state.client })} />;
}

function Shell({ client, me, setMe, signedOut }: { client: Client; me: Me; setMe: (me: Me) => void;
                                                   signedOut: () => void }) {
  const location = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const signed = useMemo<Signed>(() => ({
    client, me,
    reload: async () => setMe(await client.me()),
    switchTenant: async (tenantId) => {
      await sessionOf(client).refresh({ tenantId });
      setMe(await client.me());
    },
    signOut: async () => {
      try { await sessionOf(client).logout(); } finally { signedOut(); }
    },
  }), [client, me, setMe, signedOut]);

  let found: { route: (typeof ROUTES)[number]; params: Record<string, string> } | undefined;
  for (const route of ROUTES) {
    const params = match(route.path, location.path);
    if (params) { found = { route, params }; break; }
  }
  useEffect(() => {
    document.title = `${found?.route.title ?? "Not found"} · ${me.tenant.name}`;
    setMenuOpen(false);
  }, [found?.route.path, me.tenant.name]);
  const sections = ["Build", "Observe", "Settings"] as const;
  const Page = found?.route.page;
  return (
    <SignedContext.Provider value={signed}>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById("main")?.focus(); }}>Skip to content</a>
      <header class="top">
        <button type="button" class="menu" aria-expanded={menuOpen} aria-controls="nav"
                onClick={() => setMenuOpen(!menuOpen)}>Menu</button>
        <a class="brand" href="#/">Dashboard</a>
        <TenantSwitcher />
        <span class="who">{me.user?.email}</span>
        <button type="button" onClick={() => void signed.signOut()}>Sign out</button>
      </header>
      <div class="layout">
        <nav id="nav" class={menuOpen ? "open" : ""} aria-label="Main">
          {sections.filter((section) => ROUTES.some((r) => r.section === section)).map((section) => (
            <div key={section}>
              <h2>{section}</h2>
              <ul>
                {ROUTES.filter((r) => r.section === section).map((r) => (
                  <li key={r.path}>
                    <a href={`#${r.path}`} aria-current={found?.route.path === r.path ? "page" : undefined}>{r.title}</a>
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </nav>
        <main id="main" tabIndex={-1}>
          {Page ? <Page key={`${me.tenant.id}:${location.path}`} params={found?.params ?? {}} query={location.query} />
            : <><h1>Not found</h1><p>No page is at {location.path}. <a href="#/">Overview</a></p></>}
        </main>
      </div>
    </SignedContext.Provider>
  );
}

function TenantSwitcher() {
  const { me, switchTenant } = useSigned();
  const [error, setError] = useState<unknown>(null);
  if (me.tenants.length < 2) return <span class="tenant" aria-label="Tenant">{me.tenant.name}</span>;
  return (
    <span class="tenant">
      <label for="tenant-switcher" class="visually-hidden">Tenant</label>
      <select id="tenant-switcher" value={me.tenant.id} onChange={(e) => {
        setError(null);
        switchTenant(e.currentTarget.value).catch(setError);
      }}>
        {me.tenants.map((t) => <option key={t.id} value={t.id}>{t.name} ({t.role})</option>)}
      </select>
      {error !== null && <ErrorNotice error={error} />}
    </span>
  );
}
