"""`svc` in a real pseudo-terminal, as a person runs it (the issue's end-to-end path): a supervised
run stops for approval and says how to approve it, `svc agents runs approve` continues it and the
result prints; a destructive command asks on the terminal; tables on a terminal, tab-separated
lines through a pipe; NO_COLOR. The programs are separate processes on the local stack."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from tests.support.terminal import Terminal

pytestmark = pytest.mark.long_running   # minutes long: its test process starts with it (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
GOAL = "Write the file notes.md with 'approved in a terminal'"
ESCAPE = b"\x1b["


@pytest.fixture
def terminal(account, tmp_path):
    """Starts `svc ARGS` in a terminal with the account's key; the worktree's client first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC_")}
    env.update({"SVC_API_KEY": account["key"], "SVC_CONFIG_DIR": str(tmp_path / "svc"),
                "SVC_CREDENTIAL_STORE": "file", "TERM": "xterm-256color", "PYTHONUNBUFFERED": "1",
                "PYTHONPATH": os.pathsep.join([str(ROOT / "client"), env.get("PYTHONPATH", "")])})
    env.pop("NO_COLOR", None)
    started: list[Terminal] = []

    def start(*args: str, columns: int = 120, shell: bool = False, **extra: str) -> Terminal:
        svc = [sys.executable, "-m", "svc_client.cli", "--base-url", account["baseUrl"]]
        argv = ["sh", "-c", " ".join(svc) + " " + args[0]] if shell else [*svc, *args]
        started.append(Terminal(argv, {**env, **extra}, columns=columns))
        return started[-1]
    yield start
    for term in started:
        if term.process.poll() is None:
            term.process.kill()


def test_a_supervised_run_waits_is_approved_in_the_terminal_and_its_result_prints(run, account, terminal):
    env = {"SVC_API_KEY": account["key"]}
    project = run.data("projects", "create", "Terminal", env=env)
    agent = run.data("agents", "create", "Notes", "--prompt", "You keep notes.", "--autonomy", "supervised",
                     env=env)

    started = terminal("agents", "run", agent["id"], GOAL, "--project", project["id"])
    started.wait_for(re.compile(r"Waiting for approval: write_file"))
    found = started.wait_for(re.compile(r"approve: svc agents runs approve (agt_\w+) (run_\w+)"))
    assert started.finish() == 0
    assert found.group(1) == agent["id"] and "awaiting_approval" in started.text
    run_id = found.group(2)

    approved = terminal("agents", "runs", "approve", agent["id"], run_id, "--reason", "go ahead")
    approved.wait_for(re.compile(rf"completed {run_id}"))
    assert approved.finish() == 0
    assert "tool write_file success" in approved.text
    assert "Waiting for approval" not in approved.text
    shown = run.data("agents", "runs", "show", agent["id"], run_id, env=env)
    assert shown["status"] == "completed" and shown["output"] and shown["output"] in approved.text.replace("\r", "")


def test_a_destructive_command_asks_on_the_terminal(run, account, terminal):
    project = run.data("projects", "create", "Ask first", env={"SVC_API_KEY": account["key"]})
    declined = terminal("projects", "delete", project["id"])
    declined.wait_for(re.compile(rf"Delete project {project['id']}\? \[y/N\]"))
    declined.type("n\r")
    declined.wait_for(re.compile("Not confirmed: nothing was done"))
    assert declined.finish() == 1
    assert run.data("projects", "show", project["id"], env={"SVC_API_KEY": account["key"]})["id"] == project["id"]

    accepted = terminal("projects", "delete", project["id"])
    accepted.wait_for(re.compile(r"\[y/N\]"))
    accepted.type("y\r")
    accepted.wait_for(re.compile(rf"Deleted project {project['id']}"))
    assert accepted.finish() == 0


def test_a_secret_value_is_asked_for_hidden_on_the_terminal(run, account, terminal):
    asked = terminal("secrets", "create", "DB_PASSWORD")
    asked.wait_for(re.compile("Value: "))
    asked.type("typed-not-shown-1234\r")
    asked.wait_for(re.compile(r"Created secret sec_\w+ \(DB_PASSWORD, version 1\)"))
    assert asked.finish() == 0 and "typed-not-shown-1234" not in asked.text   # not echoed
    [secret] = run.data("secrets", "list", env={"SVC_API_KEY": account["key"]})["items"]
    assert secret["name"] == "DB_PASSWORD"


def test_a_table_on_the_terminal_and_whole_ids_through_a_pipe(run, account, terminal):
    env = {"SVC_API_KEY": account["key"]}
    ids = [run.data("projects", "create", f"A project with a rather long name, number {n}", env=env)["id"]
           for n in range(2)][::-1]
    table = terminal("projects", "list", columns=60)
    table.wait_for(re.compile(r"ID\s+NAME"))
    assert table.finish() == 0
    assert all(i in table.text for i in ids)                 # ids never folded, even at 60 columns

    piped = terminal("projects list | cat", shell=True, columns=40)
    assert piped.finish() == 0
    lines = [line for line in piped.text.replace("\r", "").splitlines() if line]
    assert [line.split("\t")[0] for line in lines] == ids    # one project per line, the whole id first
    assert "ID" not in piped.text and ESCAPE not in piped.output


def test_no_color_turns_colours_off(account, terminal):
    coloured = terminal("projects", "show", "proj_missing")
    coloured.wait_for(re.compile("RESOURCE_NOT_FOUND"))
    assert coloured.finish() == 4 and ESCAPE in coloured.output
    plain = terminal("projects", "show", "proj_missing", NO_COLOR="1")
    plain.wait_for(re.compile("RESOURCE_NOT_FOUND"))
    assert plain.finish() == 4 and ESCAPE not in plain.output
    assert "No such project in your tenant: see what there is with `svc projects list`." in plain.text
