"use strict";
// The approval page of the command-line login. It talks to the API with relative paths, so it
// works wherever the API is served. The login id comes in the query, the state in the fragment
// (a fragment is never sent to a server nor in a Referer). Text is set with textContent only.
(() => {
  const $ = (id) => document.getElementById(id);
  const loginId = new URLSearchParams(location.search).get("loginId") || "";
  const state = new URLSearchParams(location.hash.slice(1)).get("state") || "";
  let accessToken = null;

  function say(text, isError) {
    $("message").textContent = text;
    $("message").className = isError ? "error" : "";
  }

  async function call(method, path, body, token) {
    const headers = { "Accept": "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (token) headers["Authorization"] = "Bearer " + token;
    const response = await fetch(path, {
      method, headers, credentials: "same-origin", cache: "no-store",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let payload = {};
    try { payload = await response.json(); } catch (_) { /* not JSON: reported below */ }
    if (!response.ok) {
      const error = payload.error || { code: "HTTP_" + response.status, message: "The request failed." };
      throw Object.assign(new Error(error.message), { code: error.code, details: error.details, status: response.status });
    }
    return payload.data;
  }

  const when = (iso) => new Date(iso).toLocaleString();

  function showRequest(info) {
    $("code").textContent = info.verificationCode;
    $("cli-version").textContent = info.cliVersion;
    $("platform").textContent = info.platform;
    $("created").textContent = when(info.created_at);
    $("expires").textContent = when(info.expires_at);
    $("request").hidden = false;
  }

  const ENDED = {
    approved: "This login was already approved.",
    denied: "This login was denied.",
    expired: "This login request has expired. Start a new one from your terminal.",
    consumed: "This login was already completed.",
  };

  async function signedIn(pair) {
    accessToken = pair.accessToken;
    const me = await call("GET", "../../auth/me", undefined, accessToken);
    $("who").textContent = me.user.email;
    $("tenant-name").textContent = me.tenant.name;
    const select = $("tenant");
    select.replaceChildren(...me.tenants.map((t) => {
      const option = new Option(t.name + " (" + t.role + ")", t.id);
      option.selected = t.id === me.tenant.id;
      return option;
    }));
    $("tenant-row").hidden = me.tenants.length < 2;
    $("sign-in").hidden = true;
    $("decision").hidden = false;
    say("Check that the code matches your terminal, then approve or deny.");
  }

  async function decide(action) {
    $("approve").disabled = $("deny").disabled = true;
    try {
      await call("POST", action, { loginId, state }, accessToken);
      $("decision").hidden = true;
      say(action === "complete"
        ? "Approved. You can close this window and return to your terminal."
        : "Denied. The command-line client will not be signed in.");
    } catch (error) {
      $("approve").disabled = $("deny").disabled = false;
      const ended = (error.details || {}).reason === "denied" ? "denied" : error.code;
      say(ENDED[{ LOGIN_SESSION_EXPIRED: "expired", LOGIN_SESSION_CONSUMED: "consumed", denied: "denied" }[ended]]
          || error.message, true);
    }
  }

  $("sign-in").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("sign-in-button").disabled = true;
    try {
      await signedIn(await call("POST", "../../auth/login",
                                { email: $("email").value, password: $("password").value }));
    } catch (error) {
      say(error.status === 401 ? "Wrong e-mail or password." : error.message, true);
    } finally {
      $("sign-in-button").disabled = false;
    }
  });

  $("tenant").addEventListener("change", async () => {
    try {  // a token for the chosen tenant, from the refresh cookie set at sign-in
      await signedIn(await call("POST", "../../auth/refresh", { tenantId: $("tenant").value }));
    } catch (error) {
      say(error.message, true);
    }
  });

  $("approve").addEventListener("click", () => decide("complete"));
  $("deny").addEventListener("click", () => decide("deny"));

  async function main() {
    if (!/^[A-Za-z0-9_-]{43}$/.test(loginId) || !/^[0-9a-f]{64}$/.test(state)) {
      say("This address is incomplete: open the exact link your terminal printed.", true);
      return;
    }
    let info;
    try {
      info = await call("GET", "info?loginId=" + encodeURIComponent(loginId));
    } catch (error) {
      say(error.status === 404 ? "No such login request." : error.message, true);
      return;
    }
    showRequest(info);
    if (info.status !== "pending") {
      // A denied login reads expired (the spec's values), with reason denied.
      say(ENDED[info.reason === "denied" ? "denied" : info.status] || "This login cannot be approved.", true);
      return;
    }
    try {  // already signed in here? The refresh cookie (HttpOnly, this API only) says so.
      await signedIn(await call("POST", "../../auth/refresh", {}));
    } catch (_) {
      $("sign-in").hidden = false;
      say("Sign in to approve or deny this login.");
    }
  }

  main();
})();
