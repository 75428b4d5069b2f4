"use strict";
// The page an invitation's e-mailed link opens. The token is in the fragment (never sent to a
// server nor in a Referer); the page sends it to lookup and accept itself. Text is set with
// textContent only.
(() => {
  const $ = (id) => document.getElementById(id);
  const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
  history.replaceState(null, "", location.pathname);  // the token leaves the address bar and history

  function say(text, isError) {
    $("message").textContent = text;
    $("message").className = isError ? "error" : "";
  }

  async function call(method, path, body) {
    const response = await fetch(path, {
      method, credentials: "omit", cache: "no-store",
      headers: body === undefined ? { "Accept": "application/json" }
                                  : { "Accept": "application/json", "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let payload = {};
    try { payload = await response.json(); } catch (_) { /* not JSON */ }
    if (!response.ok) {
      throw new Error((payload.error && payload.error.message) || "The request failed (" + response.status + ").");
    }
    return payload.data;
  }

  async function show() {
    if (!token) { say("This link has no invitation token.", true); return; }
    let invitation;
    try {
      invitation = await call("GET", "/api/v1/invitations/lookup?token=" + encodeURIComponent(token));
    } catch (error) { say(error.message, true); return; }
    $("tenant").textContent = invitation.tenantName;
    $("role").textContent = invitation.role;
    $("email").textContent = invitation.email;
    $("expires").textContent = new Date(invitation.expires_at).toLocaleString();
    $("invitation").hidden = false;
    $("name-row").hidden = invitation.accountExists;
    $("name").required = !invitation.accountExists;
    $("password").autocomplete = invitation.accountExists ? "current-password" : "new-password";
    $("how").textContent = invitation.accountExists
      ? "The address has an account: enter its password to join."
      : "Create your account: your name and a password of at least 12 characters.";
    $("accept").hidden = false;
    say("");
  }

  $("accept").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("accept-button").disabled = true;
    const body = { token, password: $("password").value };
    if (!$("name-row").hidden) body.name = $("name").value;
    try {
      const signedIn = await call("POST", "/api/v1/invitations/accept", body);
      $("accept").hidden = true;
      say("You joined " + signedIn.tenant.name + " as " + signedIn.tenant.role + ".");
    } catch (error) {
      say(error.message, true);
      $("accept-button").disabled = false;
    }
  });

  show();
})();
