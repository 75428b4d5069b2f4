"""The `svc` commands that cover the rest of the API, against the local stack over real HTTP: runs
(approve, reject, cancel, watch), secrets, webhooks, keys, billing, storage, sessions, OAuth
connections and `svc api`; the conventions (tab-separated lines when piped, --json FIELDS,
--limit/--all, --yes); and the message said for each class of error."""

from __future__ import annotations

import json
import time

GOAL = "Write the file notes.md with 'hello from the cli'"


def supervised(run, env: dict) -> tuple[str, str]:
    project = run.data("projects", "create", "Runs", env=env)
    agent = run.data("agents", "create", "Notes", "--prompt", "You keep notes.", "--autonomy", "supervised",
                     env=env)
    return agent["id"], project["id"]


def test_lists_piped_are_tab_separated_lines_with_whole_ids_and_page_with_limit_all_and_cursor(run, account):
    env = {"SVC_API_KEY": account["key"]}
    made = [run.data("projects", "create", f"Project number {i} with a long name", env=env)["id"] for i in range(3)]
    newest_first = made[::-1]
    piped = run("projects", "list", env=env).stdout          # click's runner is not a terminal: a pipe
    lines = piped.splitlines()
    assert [line.split("\t")[0] for line in lines] == newest_first
    assert lines[0].split("\t")[1] == "Project number 2 with a long name" and len(lines[0].split("\t")) == 4

    two = run.data("projects", "list", "--limit", "2", env=env)
    assert [p["id"] for p in two["items"]] == newest_first[:2] and two["nextCursor"]
    rest = run.data("projects", "list", "--cursor", two["nextCursor"], env=env)
    assert [p["id"] for p in rest["items"]] == newest_first[2:] and rest["nextCursor"] is None
    assert [p["id"] for p in run.data("projects", "list", "--all", env=env)["items"]] == newest_first
    more = run("projects", "list", "--limit", "1", env=env)
    assert more.stdout.count("\n") == 1 and "more: --cursor" in more.stderr

    assert run("projects", "list", "--json", "id,name", env=env).stdout and json.loads(
        run("projects", "list", "--json", "id,name", env=env).stdout) == [
        {"id": i, "name": f"Project number {n} with a long name"} for n, i in zip((2, 1, 0), newest_first, strict=False)]
    assert json.loads(run("projects", "show", made[0], "--json", "name", env=env).stdout) == {
        "name": "Project number 0 with a long name"}
    unknown = run("projects", "list", "--json", "colour", ok=False, env=env)
    assert unknown.exit_code == 2 and "Unknown field colour" in unknown.stderr and "name" in unknown.stderr

    changed = run.data("projects", "update", made[0], "--name", "Artemis", "--language", "go", env=env)
    assert (changed["name"], changed["language"]) == ("Artemis", "go")


def test_destructive_commands_refuse_without_yes_when_not_on_a_terminal(run, account):
    env = {"SVC_API_KEY": account["key"]}
    project = run.data("projects", "create", "Keep me", env=env)
    refused = run("projects", "delete", project["id"], ok=False, env=env)
    assert refused.exit_code == 2 and "--yes" in refused.stderr and "nothing was done" in refused.stderr
    assert run.data("projects", "show", project["id"], env=env)["id"] == project["id"]   # still there
    pack = run.data("billing", "summary", env=env)["packs"][0]["id"]
    unpaid = run("billing", "buy", "--pack", pack, ok=False, env=env)
    assert unpaid.exit_code == 2 and "charged" in unpaid.stderr
    assert run.data("billing", "ledger", env=env)["items"][0]["kind"] == "grant"   # nothing bought


def test_agents_update_delete_and_a_supervised_run_approved_rejected_cancelled(run, account):
    env = {"SVC_API_KEY": account["key"]}
    agent_id, project_id = supervised(run, env)
    assert run.data("agents", "update", agent_id, "--step-limit", "12", env=env)["config"]["stepLimit"] == 12

    waiting = run("agents", "run", agent_id, GOAL, "--project", project_id, env=env)
    assert "Waiting for approval: write_file" in waiting.stdout
    run_id = waiting.stdout.split("svc agents runs approve ")[1].split()[1]
    assert f"svc agents runs approve {agent_id} {run_id}" in waiting.stdout
    assert run.data("agents", "runs", "show", agent_id, run_id, env=env)["status"] == "awaiting_approval"
    listed = run("agents", "runs", "list", agent_id, env=env).stdout.splitlines()
    assert listed == [f"{run_id}\tawaiting_approval\t{GOAL}\t{listed[0].split(chr(9))[3]}"]
    assert [r["id"] for r in run.data("agents", "runs", agent_id, env=env)["items"]] == [run_id]  # list: the default

    approved = run.data("agents", "runs", "approve", agent_id, run_id, "--reason", "fine", env=env)
    assert approved["status"] == "completed"
    tool = [s for s in approved["steps"] if s["type"] == "tool"][0]
    assert tool["approval"]["decision"] == "approved" and tool["approval"]["reason"] == "fine"
    again = run("agents", "runs", "approve", agent_id, run_id, ok=False, env=env)
    assert again.exit_code == 5 and "CONFLICT" in again.stderr

    second = run.data("agents", "run", agent_id, GOAL, "--project", project_id, env=env)
    rejected = run.data("agents", "runs", "reject", agent_id, second["id"], "--reason", "not now", env=env)
    assert [s["status"] for s in rejected["steps"] if s["type"] == "tool"] == ["rejected"]
    assert rejected["status"] == "completed"

    third = run.data("agents", "run", agent_id, GOAL, "--project", project_id, env=env)
    assert run("agents", "runs", "cancel", agent_id, third["id"], ok=False, env=env).exit_code == 2   # no --yes
    cancelled = run.data("agents", "runs", "cancel", agent_id, third["id"], "--yes", env=env)
    assert cancelled["status"] == "cancelled"
    watched = run("agents", "runs", "watch", agent_id, third["id"], "-o", "json", ok=False, env=env)
    assert watched.exit_code == 1 and json.loads(watched.stdout)["status"] == "cancelled"   # it did not end well

    assert run.data("agents", "delete", agent_id, "--yes", env=env) == {"id": agent_id, "deleted": True}
    gone = run("agents", "runs", "list", agent_id, ok=False, env=env)
    assert gone.exit_code == 4 and "`svc agents list`" in gone.stderr


def test_a_background_run_is_watched_to_its_end_with_its_steps(run, account):
    env = {"SVC_API_KEY": account["key"]}
    project = run.data("projects", "create", "Watched", env=env)
    agent = run.data("agents", "create", "Writer", "--prompt", "You write.", "--autonomy", "autonomous", env=env)
    queued = run.data("api", "POST", f"/agents/{agent['id']}/execute", "--data",
                      json.dumps({"goal": GOAL, "projectId": project["id"], "async": True}), env=env)
    assert queued["status"] == "queued"
    watched = run("agents", "runs", "watch", agent["id"], queued["id"], env=env)
    assert "completed" in watched.stdout and "tool write_file success" in watched.stdout


def test_secrets_create_show_set_list_delete_never_print_the_value(run, account):
    env = {"SVC_API_KEY": account["key"]}
    value = "s3cr3t-" + "x" * 20
    made = run("secrets", "create", "GITHUB_TOKEN", "--value", "-", "--description", "CI", "-o", "json",
               input=value + "\n", env=env)
    secret = json.loads(made.stdout)
    assert secret["name"] == "GITHUB_TOKEN" and secret["version"] == 1 and value not in made.stdout
    newer = run.data("secrets", "set", secret["id"], "--value", "-", input="other-value\n", env=env)
    assert newer["version"] == 2
    assert run.data("secrets", "set", secret["id"], "--description", "CI token", env=env)["description"] == "CI token"
    shown = run("secrets", "show", secret["id"], env=env).stdout
    assert "GITHUB_TOKEN" in shown and value not in shown and "other-value" not in shown
    assert run("secrets", "list", env=env).stdout.split("\t")[:3] == [secret["id"], "GITHUB_TOKEN", "2"]
    no_value = run("secrets", "create", "OTHER", ok=False, env=env)   # not a terminal: nothing to ask on
    assert no_value.exit_code == 2 and "--value -" in no_value.stderr
    assert run.data("secrets", "delete", secret["id"], "--yes", env=env)["deleted"] is True
    missing = run("secrets", "show", secret["id"], ok=False, env=env)
    assert missing.exit_code == 4 and "`svc secrets list`" in missing.stderr


def test_webhooks_show_update_rotate_delete(run, account, receiver, hook):
    env = {"SVC_API_KEY": account["key"]}
    made = hook("project.created")
    assert run.data("webhooks", "show", made["id"], env=env)["url"] == receiver.url
    updated = run.data("webhooks", "update", made["id"], "--disable", "--event", "project.created",
                       "--event", "project.deleted", "--description", "both", env=env)
    assert updated["enabled"] is False and updated["events"] == ["project.created", "project.deleted"]
    rotated = run("webhooks", "rotate", made["id"], "--overlap-seconds", "0", "--yes", env=env)
    new = rotated.stdout.strip().splitlines()[-1]
    assert new.startswith("whsec_") and "shown this once" in rotated.stdout
    assert run.data("webhooks", "update", made["id"], "--enable", env=env)["enabled"] is True
    assert run.data("webhooks", "delete", made["id"], "--yes", env=env)["deleted"] is True
    assert run("webhooks", "show", made["id"], ok=False, env=env).exit_code == 4


def test_keys_show_and_rotate(run, account):
    env = {"SVC_API_KEY": account["key"]}
    made = run.data("keys", "create", "deploy", "--type", "ci", env=env)
    assert run.data("keys", "show", made["id"], env=env)["name"] == "deploy"
    rotated = run.data("keys", "rotate", made["id"], "--overlap-seconds", "0", "--yes", env=env)
    assert rotated["key"].startswith("svc_ci_") and rotated["key"] != made["key"]
    assert run.data("whoami", env={"SVC_API_KEY": rotated["key"]})["tenant"]["id"] == account["tenantId"]
    shown = run("keys", "show", made["id"], env=env).stdout  # the text view, after that use from this machine
    assert any(line.split() == ["lastUsedIp", "127.0.0.1"] for line in shown.splitlines()), shown


def test_billing_ledger_invoice_portal_and_subscription(run, account):
    env = {"SVC_API_KEY": account["key"]}
    pack = run.data("billing", "summary", env=env)["packs"][0]["id"]
    bought = run.data("billing", "buy", "--pack", pack, "--yes", env=env)
    invoice = run.data("billing", "invoice", bought["invoiceId"], env=env)
    assert invoice["id"] == bought["invoiceId"] and invoice["status"] == "paid"
    kinds = [e["kind"] for e in run.data("billing", "ledger", "--all", env=env)["items"]]
    assert kinds == ["purchase", "grant"]
    assert run("billing", "ledger", env=env).stdout.splitlines()[0].split("\t")[1] == "purchase"
    portal = run("billing", "portal", env=env)
    assert portal.stdout.strip().startswith("http")
    subscribed = run.data("billing", "subscribe", "starter", "--yes", env=env)
    assert subscribed["plan"] == "starter" or subscribed["pendingPlan"] == "starter"


def test_billing_usage_piped_and_as_json(run, account):
    from tests.support.usage import metered
    env = {"SVC_API_KEY": account["key"]}
    call = metered(account["tenantId"], "offline", "2026-11-02T09:00:00.000Z", 500, 50)
    piped = run("billing", "usage", "--from", "2026-11-01", "--to", "2026-11-30", env=env)
    assert piped.stdout.splitlines() == [f"2026-11-02\toffline\t1\t500\t50\t{call['microCredits']}"]
    assert "2026-11-01 to 2026-11-30" in piped.stderr
    series = run.data("billing", "usage", "--from", "2026-11-01", "--to", "2026-11-30", env=env)
    assert (series["from"], series["models"], len(series["days"])) == ("2026-11-01", ["offline"], 1)
    refused = run("billing", "usage", "--from", "2026-11-31", ok=False, env=env)
    assert refused.exit_code != 0 and "from" in refused.stderr


def test_tenants_regions_storage_features_and_routing(run, account):
    env = {"SVC_API_KEY": account["key"]}
    assert run.data("regions", "storage", "show", env=env)["storageMode"] == "platform"
    stored = run.data("regions", "storage", "set", "--platform", "--platform-region", "eu-west-1", "--yes", env=env)
    assert stored["storageMode"] == "platform" and stored["platformRegion"] == "eu-west-1"
    nothing = run("regions", "storage", "validate", ok=False, env=env)   # platform storage: no bucket to check
    assert nothing.exit_code == 5 and "CONFLICT" in nothing.stderr
    byos = run("regions", "storage", "validate", "--provider", "s3", "--bucket", "acme-data", "--region",
               "eu-west-1", "--access-key", "ID", "--secret-key", "-", input="secret\n", ok=False, env=env)
    assert byos.exit_code == 3 and "FORBIDDEN" in byos.stderr   # the free plan has no BYOS
    feature = run.data("regions", "feature", "byos", "--tenant", account["tenantId"], env=env)
    assert run.data("regions", "feature", "--tenant", account["tenantId"], "byos", env=env) == feature
    assert feature["enabled"] is False and feature["requiredPlan"]
    routing = run.data("regions", "routing", env=env)
    assert routing["tenantId"] == account["tenantId"] and routing["requestId"]
    assert run.data("regions", "preferences", env=env)["isDefault"] is True       # show: the default


def test_sessions_and_oauth_connections(run, account):
    env = {"SVC_API_KEY": account["key"]}
    chatted = run("chat", "-m", "Hello there", env=env)
    assert chatted.exit_code == 0
    [session] = run.data("sessions", "list", env=env)["items"]
    shown = run("sessions", "show", session["id"], env=env).stdout
    assert "Hello there" in shown and "assistant" in shown
    listed = run("sessions", "messages", session["id"], env=env).stdout.splitlines()
    assert [line.split("\t")[1:3] for line in listed] == [["user", "completed"], ["assistant", "completed"]]
    assert listed[0].split("\t")[3] == "Hello there"
    first = run.data("sessions", "messages", session["id"], "--limit", "1", env=env)
    assert [m["role"] for m in first["items"]] == ["user"] and first["nextCursor"]
    assert run.data("sessions", "delete", session["id"], "--yes", env=env)["deleted"] is True
    assert run.data("sessions", "list", env=env)["items"] == []
    assert run.data("oauth", "list", env=env)["items"] == []
    missing = run("oauth", "delete", "ocn_01ABCDEFGHJKMNPQRSTVWXYZ00", "--yes", ok=False, env=env)
    assert missing.exit_code == 4 and "`svc oauth list`" in missing.stderr


def test_svc_api_calls_any_route_with_the_credential(run, account, tmp_path):
    env = {"SVC_API_KEY": account["key"]}
    made = json.loads(run("api", "POST", "/projects", "--data", '{"name": "Via api", "description": null}',
                          env=env).stdout)
    assert made["name"] == "Via api" and made["description"] is None
    body = tmp_path / "patch.json"
    body.write_text('{"language": "rust"}')
    assert json.loads(run("api", "patch", f"/api/v1/projects/{made['id']}", "--data", f"@{body}",
                          env=env).stdout)["language"] == "rust"
    listed = json.loads(run("api", "GET", "projects?limit=1", env=env).stdout)
    assert [p["id"] for p in listed["items"]] == [made["id"]]
    portal = json.loads(run("api", "POST", "/billing/portal", "-H", "Idempotency-Key: api-test-1", env=env).stdout)
    assert portal["url"].startswith("http")
    missing = run("api", "GET", "/projects/proj_missing", ok=False, env=env)
    assert missing.exit_code == 4 and "RESOURCE_NOT_FOUND" in missing.stderr
    bad = run("api", "POST", "/projects", "--data", "{name", ok=False, env=env)
    assert bad.exit_code == 2 and "not JSON" in bad.stderr
    document = json.loads(run("api", "GET", "/openapi.json", env=env).stdout)
    assert document["openapi"].startswith("3.1")


# ---- what is said for each class of error -------------------------------------------------------

def test_a_refused_api_key_at_login_is_said_as_such(run):
    bogus = run("login", "--api-key", "bogus", ok=False)
    assert bogus.exit_code == 3
    assert "not an API key" in bogus.stderr and "malformed" not in bogus.stderr
    assert "Settings, API keys" in bogus.stderr and "svc keys create" in bogus.stderr
    wrong = run("login", "--api-key", "svc_sdk_" + "0" * 40, ok=False)
    assert wrong.exit_code == 3 and "refused that API key" in wrong.stderr and "malformed" not in wrong.stderr
    assert not (run.config_dir / "credentials.json").exists() or "apiKey" not in (
        run.config_dir / "credentials.json").read_text()


def test_an_expired_or_revoked_login_and_a_refused_environment_key_say_what_to_do(run, account):
    env = {"SVC_API_KEY": account["key"]}
    key = run.data("keys", "create", "laptop", "--type", "cli", env=env)
    run("login", "--api-key", key["key"])
    assert run.data("whoami")["tenant"]["id"] == account["tenantId"]
    run("keys", "revoke", key["id"], "--yes", env=env)
    stored = run("projects", "list", ok=False)
    assert stored.exit_code == 3 and "stored for profile default was refused" in stored.stderr
    # A device login (the stored credential names its key): "your login has expired".
    credentials = run.config_dir / "credentials.json"
    saved = json.loads(credentials.read_text())
    saved["default"]["keyId"] = key["id"]
    credentials.write_text(json.dumps(saved))
    expired = run("projects", "list", ok=False)
    assert expired.exit_code == 3 and "Your login (profile default) has expired or was revoked: run `svc login` " \
        "again." in expired.stderr
    from_env = run("projects", "list", ok=False, env={"SVC_API_KEY": key["key"]})
    assert from_env.exit_code == 3 and "SVC_API_KEY was refused" in from_env.stderr


def test_a_missing_gift_card_suggests_no_list_command(run, account):
    missing = run("billing", "redeem", "NOPE-NOPE-NOPE", ok=False, env={"SVC_API_KEY": account["key"]})
    assert missing.exit_code in (1, 4), missing.stderr
    assert "list" not in missing.stderr.splitlines()[-1]


def test_payment_required_says_how_to_get_credit(run, account, capsys):
    from ops.__main__ import main
    env = {"SVC_API_KEY": account["key"]}
    agent_id, project_id = supervised(run, env)
    balance = run.data("billing", "summary", env=env)["balance"]["microCredits"]
    assert main(["billing", "adjust", account["tenantId"], str(-balance), "--reason", "cli test: use it up"]) == 0
    refused = run("agents", "run", agent_id, GOAL, "--project", project_id, ok=False, env=env)
    assert refused.exit_code == 7 and "PAYMENT_REQUIRED" in refused.stderr
    assert "svc billing buy --pack" in refused.stderr and "svc billing redeem" in refused.stderr


def test_rate_limited_says_when_to_try_again(run, account):
    """The key's counter is filled for a window an hour ahead (the counter follows the latest
    window it has seen), so the service answers 429 with a Retry-After too long to wait for."""
    from svc_core.adapters import aws
    from svc_core.platform.config import settings
    now = int(time.time())
    ahead = now - now % settings().rate_limit_window_seconds + 3600
    aws.client("dynamodb").put_item(TableName=settings().rate_limits_table, Item={
        "pk": {"S": account["keyId"]}, "windowStart": {"N": str(ahead)}, "hits": {"N": str(10 ** 9)},
        "ttl": {"N": str(ahead + 7200)}})
    limited = run("projects", "list", ok=False, env={"SVC_API_KEY": account["key"]})
    assert limited.exit_code == 6 and "RATE_LIMIT_EXCEEDED" in limited.stderr
    assert "try again in " in limited.stderr and " s (limit " in limited.stderr


def test_status_answers_without_a_credential(run, account):
    shown = run("status")                       # no SVC_API_KEY, nothing stored
    assert "ok" in shown.stdout and "stage" in shown.stdout
    assert run.data("status")["status"] == "ok"


def test_events_list_show_and_webhooks_redeliver_replay(run, account, receiver, hook):
    env = {"SVC_API_KEY": account["key"]}
    webhook = hook("project.created")
    project = run.data("projects", "create", "Logged", env=env)
    first = receiver.wait_for(1, timeout=20)
    assert first and first[0].payload is not None, "the project's event was not delivered"
    event_id = first[0].headers["webhook-id"]

    listed = run.data("events", "list", "--type", "project.created", "--object", project["id"], env=env)
    assert [e["id"] for e in listed["items"]] == [event_id]
    assert run("events", "list", "--type", "project.created", env=env).stdout.splitlines()[0].split("\t")[0] \
        == event_id                          # newest first, whole ids, one per line
    shown = run.data("events", "show", event_id, env=env)
    assert shown["type"] == "project.created" and shown["data"]["id"] == project["id"]

    again = run("webhooks", "redeliver", webhook["id"], event_id, env=env)
    assert f"for webhook {webhook['id']} again" in again.stdout
    second = receiver.wait_for(2, timeout=20)
    assert len(second) >= 2 and second[1].headers["webhook-id"] == event_id and second[1].payload is not None

    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 120))  # the account is this test's own
    replay = run.data("webhooks", "replay", webhook["id"], "--since", since, env=env)
    assert replay["webhookId"] == webhook["id"] and replay["since"]
    third = receiver.wait_for(3, timeout=20)     # the replay sends the event once more
    assert len(third) >= 3 and third[2].headers["webhook-id"] == event_id and third[2].payload is not None
    status = run.data("webhooks", "replay-status", webhook["id"], replay["id"], env=env)
    assert status["id"] == replay["id"] and status["matched"] >= 1
    missing = run("events", "show", "evt_" + "0" * 26, ok=False, env=env)
    assert missing.exit_code == 4
