"use strict";
// The page a password reset's e-mailed link opens (when the deployment names no dashboard). The token
// is in the fragment (never sent to a server nor in a Referer); the page sends it to reset itself.
// Text is set with textContent only.
(() => {
  const $ = (id) => document.getElementById(id);
  const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
  history.replaceState(null, "", location.pathname);  // the token leaves the address bar and history

  function say(text, isError) {
    $("message").textContent = text;
    $("message").className = isError ? "error" : "";
  }

  if (!token) {
    say("This link has no password reset token: open the link of the e-mail, or ask for a new one.", true);
    return;
  }
  $("reset").hidden = false;

  $("reset").addEventListener("submit", async (event) => {
    event.preventDefault();
    const password = $("password").value;
    if (password !== $("repeat").value) { say("The two passwords differ.", true); return; }
    $("reset-button").disabled = true;
    say("Setting the password…");
    let response, payload = {};
    try {
      response = await fetch("/api/v1/auth/password/reset", {
        method: "POST", credentials: "omit", cache: "no-store",
        headers: { "Accept": "application/json", "Content-Type": "application/json" },
        body: JSON.stringify({ token, password }),
      });
      try { payload = await response.json(); } catch (_) { /* not JSON */ }
    } catch (_) {
      say("The service could not be reached; try again.", true);
      $("reset-button").disabled = false;
      return;
    }
    if (response.ok) {
      $("reset").hidden = true;
      say("The password of " + payload.data.email + " is set, and every sign-in of the account has ended. "
          + "Sign in with the new password.");
      return;
    }
    say((payload.error && payload.error.message) || "The request failed (" + response.status + ").", true);
    // A link that names nothing, was used or has expired stays so: only a new one helps.
    if ([403, 404, 409].includes(response.status)) $("reset").hidden = true;
    else $("reset-button").disabled = false;
  });
})();
