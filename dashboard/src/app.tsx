/**
 * The application: config, then the session (a silent refresh first: the refresh cookie of an
 * earlier sign-in, same site only), then the sign-in or sign-up page, or the shell with the
 * navigation, the tenant switcher and the page of the location's hash; beside it, the toasts.
 */
import { Client, type Me } from "@svc/client";
import { useEffect, useMemo, useState } from "preact/hooks";

import { newClient, sessionOf, type Signed, SignedContext, useSigned } from "./api";
import { applyBrand, type Brand, titleOf } from "./brand";
import { BrandMark } from "./components/brand-mark";
import { ErrorNotice, Loading } from "./components/status";
import { Toasts } from "./components/toasts";
import { type DashboardConfig, loadConfig } from "./config";
import { resetToken } from "./account";
import { PLACES, SIGNED_OUT } from "./places";
import { ForgotPassword } from "./pages/forgot-password";
import { ResetPassword } from "./pages/reset-password";
import { SignIn } from "./pages/sign-in";
import { type Registration, SignUp } from "./pages/sign-up";
import { match, navigate, useLocation } from "./router";
import { ROUTES } from "./routes";

type Register = (body: Registration) => Promise<unknown>;

/** What the start made: the signed-in client (no one signed in yet), the brand, the registration. */
interface Started { client: Client; brand: Brand; register: Register }

type State =
  | { phase: "starting" }
  | { phase: "failed"; error: unknown }
  | { phase: "signed-out"; started: Started; notice?: string }
  | { phase: "signed-in"; started: Started; me: Me };

export function App({ config }: { config?: DashboardConfig }) {
  return <><Phases config={config} /><Toasts /></>;
}

function Phases({ config }: { config?: DashboardConfig | undefined }) {
  const [state, setState] = useState<State>({ phase: "starting" });
  const location = useLocation();

  useEffect(() => {
    const start = async () => {
      const settings = config ?? await loadConfig();
      const brand = settings.brand;
      applyBrand(brand);
      const client = newClient(settings.apiBaseUrl, () => setState((now) =>
        now.phase === "signed-in" ? { phase: "signed-out", started, notice: "Your session ended: sign in again." } : now));
      // Registration needs no session: a client of its own, which tries no token first.
      const accounts = new Client({ baseUrl: settings.apiBaseUrl, maxRetries: 0 });
      const started: Started = { client, brand, register: (body) => accounts.call("register", { body }) };
      try {
        await sessionOf(client).refresh();   // the cookie of an earlier sign-in (same site only)
        setState({ phase: "signed-in", started, me: await client.me() });
      } catch {
        setState({ phase: "signed-out", started });
      }
    };
    start().catch((error: unknown) => setState({ phase: "failed", error }));
  }, [config]);

  if (state.phase === "starting") return <main id="main"><Loading what="the dashboard" /></main>;
  if (state.phase === "failed") return <main id="main"><h1>The dashboard could not start</h1><ErrorNotice error={state.error} /></main>;
  const { started } = state;
  const { client, brand } = started;
  // The reset link's page, signed in too: the reset ends every session, then signs in with the new password.
  if (state.phase === "signed-out" || location.path === SIGNED_OUT.resetPassword.path) {
    return <SignedOut client={client} brand={brand} register={started.register}
                      notice={state.phase === "signed-out" ? state.notice : undefined}
                      signIn={async (email, password, landing) => {
      await sessionOf(client).login(email, password);
      const me = await client.me();
      if (landing !== undefined) navigate(landing);
      setState({ phase: "signed-in", started, me });
    }} />;
  }
  return <Shell client={client} brand={brand} me={state.me}
                setMe={(me) => setState({ phase: "signed-in", started, me })}
                signedOut={() => setState({ phase: "signed-out", started })} />;
}

/** The pages before a sign-in: the sign-up, forgotten password and reset pages at their addresses, the
 * sign-in page at any other (which then opens the page the address names). The e-mail typed on one is
 * kept on the others. */
function SignedOut({ client, brand, register, notice, signIn }: {
  client: Client; brand: Brand; register: Register; notice: string | undefined;
  signIn: (email: string, password: string, landing?: string) => Promise<void> }) {
  const location = useLocation();
  const [email, setEmail] = useState("");
  const signInHome = (address: string, password: string) => signIn(address, password, PLACES.home.path);
  if (location.path === SIGNED_OUT.signUp.path) {
    return <SignUp brand={brand} email={email} setEmail={setEmail} register={register} signIn={signInHome} />;
  }
  if (location.path === SIGNED_OUT.forgotPassword.path) {
    return <ForgotPassword brand={brand} email={email} setEmail={setEmail}
                           forgot={(address) => sessionOf(client).forgotPassword(address)} />;
  }
  if (location.path === SIGNED_OUT.resetPassword.path) {
    return <ResetPassword brand={brand} token={resetToken(location.query)} signIn={signInHome}
                          reset={(token, password) => sessionOf(client).resetPassword(token, password)} />;
  }
  return (
    <>
      {notice && <p class="notice" role="status">{notice}</p>}
      <SignIn brand={brand} email={email} setEmail={setEmail} onSignIn={(address, password) => signIn(address, password)} />
    </>
  );
}

function Shell({ client, brand, me, setMe, signedOut }: {
  client: Client; brand: Brand; me: Me; setMe: (me: Me) => void; signedOut: () => void }) {
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

  // The sign-up and forgotten password pages' addresses, signed in (a link kept, Back after signing up):
  // the Overview.
  const signedOutPage = location.path === SIGNED_OUT.signUp.path || location.path === SIGNED_OUT.forgotPassword.path;
  const path = signedOutPage ? PLACES.home.path : location.path;
  useEffect(() => { if (signedOutPage) window.location.replace(`#${PLACES.home.path}`); }, [signedOutPage]);
  let found: { route: (typeof ROUTES)[number]; params: Record<string, string> } | undefined;
  for (const route of ROUTES) {
    const params = match(route.path, path);
    if (params) { found = { route, params }; break; }
  }
  useEffect(() => {
    document.title = titleOf(brand, found?.route.title ?? "Not found", me.tenant.name);
    setMenuOpen(false);
  }, [found?.route.path, me.tenant.name, brand]);
  const sections = ["Build", "Observe", "Settings"] as const;
  const Page = found?.route.page;
  return (
    <SignedContext.Provider value={signed}>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById("main")?.focus(); }}>Skip to content</a>
      <header class="top">
        <button type="button" class="menu" aria-expanded={menuOpen} aria-controls="nav"
                onClick={() => setMenuOpen(!menuOpen)}>Menu</button>
        <a class="brand" href="#/"><BrandMark brand={brand} /></a>
        <TenantSwitcher />
        <a class="who" href={`#${PLACES.profile.path}`} title={me.user?.email ?? undefined}
           aria-current={path === PLACES.profile.path ? "page" : undefined}>{me.user?.name || me.user?.email}</a>
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
          {Page ? <Page key={`${me.tenant.id}:${path}`} params={found?.params ?? {}} query={location.query} />
            : <><h1>Not found</h1><p>No page is at {path}. <a href="#/">Overview</a></p></>}
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
