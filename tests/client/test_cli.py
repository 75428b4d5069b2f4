"""The `svc` command-line client against the local stack over real HTTP, mostly with
`--output json` (what scripts read). The credential store is forced to its file backend in a
temporary config directory."""

from __future__ import annotations

import json
import os
import stat

from click.testing import CliRunner

from svc_client.cli import cli


def test_login_with_an_api_key_stores_it_readable_by_the_user_only_and_commands_use_it(run, account):
    made = run.data("login", "--api-key", "-", input=account["key"] + "\n")
    assert made["loggedIn"] is True and made["store"] == "file" and made["tenant"]["id"] == account["tenantId"]
    stored = run.config_dir / "credentials.json"
    assert stat.S_IMODE(os.stat(stored).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(run.config_dir).st_mode) == 0o700
    assert json.loads(stored.read_text())["default"]["apiKey"] == account["key"]
    assert run.data("whoami")["tenant"]["id"] == account["tenantId"]
    assert run.data("logout")["loggedOut"] is True
    refused = run("projects", "list", ok=False)
    assert refused.exit_code != 0 and "Not logged in" in refused.stderr


def test_projects_list_create_show_delete(run, account):
    env = {"SVC_API_KEY": account["key"]}
    made = run.data("projects", "create", "Apollo", "--description", "Moon shot", "--language", "python", env=env)
    assert made["id"].startswith("proj_") and made["language"] == "python"
    listed = run.data("projects", "list", env=env)
    assert [p["id"] for p in listed["items"]] == [made["id"]] and listed["nextCursor"] is None
    assert run.data("projects", "show", made["id"], env=env) == made
    assert "Apollo" in run("projects", "list", env=env).stdout          # the text view
    assert run.data("projects", "delete", made["id"], "--yes", env=env) == {"id": made["id"], "deleted": True}
    missing = run("projects", "show", made["id"], ok=False, env=env)
    assert missing.exit_code == 4
    assert "RESOURCE_NOT_FOUND" in missing.stderr and "No such project" in missing.stderr
    assert "`svc projects list`" in missing.stderr
    as_json = run("projects", "show", made["id"], "--output", "json", ok=False, env=env)
    assert json.loads(as_json.stderr)["error"]["code"] == "RESOURCE_NOT_FOUND"


def test_a_validation_error_names_the_field(run, account):
    refused = run("projects", "create", "x" * 201, ok=False, env={"SVC_API_KEY": account["key"]})
    assert refused.exit_code == 1 and "VALIDATION_ERROR" in refused.stderr and "name (body)" in refused.stderr


def test_agents_create_run_and_runs(run, account):
    env = {"SVC_API_KEY": account["key"]}
    project = run.data("projects", "create", "Docs", env=env)
    agent = run.data("agents", "create", "Notes", "--prompt", "You keep notes.", "--autonomy", "autonomous",
                     "--tool", "list_files", env=env)
    assert agent["config"]["tools"] == ["list_files"]
    ran = run("agents", "run", agent["id"], "List the files.", "--project", project["id"], "-o", "json",
              ok=False, env=env)
    result = json.loads(ran.stdout)
    assert result["agentId"] == agent["id"] and result["status"] in ("completed", "failed")
    assert ran.exit_code == (0 if result["status"] == "completed" else 1)
    runs = run.data("agents", "runs", agent["id"], env=env)
    assert [r["id"] for r in runs["items"]] == [result["id"]]


def test_keys_create_list_revoke(run, account):
    env = {"SVC_API_KEY": account["key"]}
    made = run.data("keys", "create", "deploy", "--type", "ci", "--scope", "projects:read", env=env)
    assert made["key"].startswith("svc_ci_") and made["scopes"] == ["projects:read"]
    assert made["id"] in [k["id"] for k in run.data("keys", "list", "--limit", "100", env=env)["items"]]
    assert run.data("keys", "revoke", made["id"], "--yes", env=env)["status"] == "revoked"
    refused = run("projects", "list", ok=False, env={"SVC_API_KEY": made["key"]})
    assert refused.exit_code == 3 and "svc login" in refused.stderr


def test_webhooks_create_test_deliveries(run, account, receiver, hook):
    env = {"SVC_API_KEY": account["key"]}
    made = hook("project.created")
    assert made["events"] == ["project.created"] and "secret" not in made
    assert [w["id"] for w in run.data("webhooks", "list", env=env)["items"]] == [made["id"]]
    queued = run.data("webhooks", "test", made["id"], env=env)
    [delivery] = receiver.wait_for(1, timeout=15)
    assert delivery.verify_error is None and delivery.payload["id"] == queued["id"]
    attempts = run.data("webhooks", "deliveries", made["id"], env=env)["items"]
    assert [(a["eventId"], a["outcome"]) for a in attempts] == [(queued["id"], "delivered")]
    generated = run.data("webhooks", "create", receiver.url, "--event", "*", env=env)
    assert generated["secret"].startswith("whsec_")


def test_tenants_and_regions_show_and_set(run, account):
    env = {"SVC_API_KEY": account["key"]}
    assert run.data("tenants", "show", env=env)["id"] == account["tenantId"]
    changed = run.data("tenants", "set", "--timezone", "Europe/Paris", "--display-name", "Acme", env=env)
    assert changed["settings"]["timezone"] == "Europe/Paris" and changed["settings"]["displayName"] == "Acme"
    assert [t["id"] for t in run.data("tenants", "list", env=env)["items"]] == [account["tenantId"]]
    assert "eu-west-1" in [r["id"] for r in run.data("regions", "list", env=env)["items"]]
    assert run.data("regions", "preferences", "show", env=env)["isDefault"] is True
    prefs = run.data("regions", "preferences", "set", "--primary-region", "eu-west-1", env=env)
    assert prefs["primaryRegion"] == "eu-west-1"
    assert run.data("regions", "storage", env=env)["storageMode"] == "platform"
    forbidden = run("regions", "preferences", "set", "--secondary-region", "eu-central-1", ok=False, env=env)
    assert forbidden.exit_code == 3 and "FORBIDDEN" in forbidden.stderr


def test_profiles_keep_a_base_url_per_environment(run, account, tmp_path):
    runner = CliRunner()
    env = {"SVC_CONFIG_DIR": str(run.config_dir), "SVC_CREDENTIAL_STORE": "file"}
    made = runner.invoke(cli, ["profiles", "set", "local", "--base-url", account["baseUrl"] + "/api/v1"], env=env)
    assert made.exit_code == 0, made.output
    assert runner.invoke(cli, ["-p", "local", "login", "--api-key", account["key"]], env=env).exit_code == 0
    who = runner.invoke(cli, ["--profile", "local", "whoami", "-o", "json"], env=env)
    assert who.exit_code == 0 and json.loads(who.stdout)["tenant"]["id"] == account["tenantId"]
    # Another profile has no login, and one pointing nowhere says it cannot reach the service.
    assert runner.invoke(cli, ["-p", "other", "whoami"], env=env).exit_code != 0
    unreachable = runner.invoke(cli, ["--base-url", "http://127.0.0.1:9", "whoami"],
                                env={**env, "SVC_API_KEY": account["key"]})
    assert unreachable.exit_code == 1 and "Cannot reach the service" in unreachable.stderr


def test_billing_summary_buy_and_invoices(run, account):
    env = {"SVC_API_KEY": account["key"]}
    summary = run.data("billing", "summary", env=env)
    assert summary["plan"] == "free" and summary["balance"]["credits"]
    assert "balance" in run("billing", "summary", env=env).stdout
    pack = summary["packs"][0]["id"]
    buy = ("billing", "buy", "--pack", pack, "--idempotency-key", "cli-test-1", "--yes")
    bought = run.data(*buy, env=env)
    assert run.data(*buy, env=env)["id"] == bought["id"]
    assert bought["status"] == "succeeded"
    assert bought["invoiceId"] in [i["id"] for i in run.data("billing", "invoices", env=env)["items"]]
    both = run("billing", "buy", "--pack", pack, "--credits", "5", ok=False, env=env)
    assert both.exit_code == 2 and "exactly one" in both.stderr


def test_agents_run_in_the_background_is_followed_to_its_end(run, account):
    env = {"SVC_API_KEY": account["key"]}
    project = run.data("projects", "create", "Async", env=env)
    agent = run.data("agents", "create", "Reader", "--prompt", "You read.", "--autonomy", "autonomous", env=env)
    ran = run.data("agents", "run", agent["id"], "Read the project.", "--project", project["id"], "--background",
                   env=env)
    assert ran["background"] is True and ran["status"] == "completed" and ran["output"]
