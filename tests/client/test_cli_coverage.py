"""Every operation of the API has a `svc` command, or a reason in writing why not; and every
command follows the same conventions (-h, an example, --limit/--all on lists, --yes on the
destructive ones), read from the command tree itself. The completion scripts are checked by the
shells that read them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from svc_client.cli import cli
from svc_client.commands.operations import _USER_SESSION, COMMANDS, NOT_COMMANDS

ROOT = Path(__file__).resolve().parents[2]
METHODS = ("get", "post", "put", "patch", "delete")


def operations() -> dict[str, str]:
    document = json.loads((ROOT / "functions" / "meta" / "openapi.json").read_text())
    return {op["operationId"]: f"{method.upper()} {path}" for path, item in document["paths"].items()
            for method, op in item.items() if method in METHODS}


def commands(group: click.Group = cli, path: tuple[str, ...] = ()) -> dict[str, click.Command]:
    """Every command by its path ("agents runs approve"), groups included."""
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        found[" ".join((*path, name))] = command
        if isinstance(command, click.Group):
            found.update(commands(command, (*path, name)))
    return found


def leaves() -> dict[str, click.Command]:
    return {path: c for path, c in commands().items() if not isinstance(c, click.Group)}


def test_every_operation_has_a_command_or_a_reason():
    ops = operations()
    missing = sorted(f"{op_id} ({route})" for op_id, route in ops.items()
                     if op_id not in COMMANDS and op_id not in NOT_COMMANDS)
    assert not missing, f"operations with no command and no reason: {missing}"
    assert not set(COMMANDS) & set(NOT_COMMANDS)
    stale = sorted((set(COMMANDS) | set(NOT_COMMANDS)) - set(ops))
    assert not stale, f"entries for operations the document does not have: {stale}"
    assert all(len(reason) > 30 for reason in NOT_COMMANDS.values())
    # Most of the API is commands; the exclusions are the browser's and other programs' routes, and a
    # signed-in person's own, which no key (every credential the CLI holds) may call.
    others = [reason for reason in NOT_COMMANDS.values() if not reason.startswith(_USER_SESSION)]
    assert len(others) < len(COMMANDS) / 3


def test_every_named_command_exists():
    known = commands()
    absent = sorted({path for path in COMMANDS.values() if path not in known
                     or isinstance(known[path], click.Group)})
    assert not absent, f"commands named in the table that the CLI does not have: {absent}"


@pytest.mark.parametrize("path", sorted(leaves()))
def test_each_command_has_help_on_dash_h_with_an_example(path):
    shown = CliRunner().invoke(cli, [*path.split(), "-h"], prog_name="svc")
    assert shown.exit_code == 0, shown.output
    assert "svc " in shown.output.partition("\n  Examples:\n")[2], f"`svc {path} -h` shows no example"
    assert leaves()[path].help, f"`svc {path}` says nothing of what it does"


def test_list_commands_take_limit_and_all_and_destructive_ones_take_yes():
    for path, command in leaves().items():
        names = {name for p in command.params for name in p.opts}
        if path.endswith(" list") and path not in ("profiles list", "tenants list", "regions list"):
            assert {"--limit", "--all", "--cursor"} <= names, path   # the two lists the API does not page
        if path.split()[-1] in ("delete", "revoke", "cancel", "rotate", "buy", "subscribe") or path == \
                "regions storage set":
            assert "--yes" in names, path


def test_completion_scripts_are_accepted_by_their_shells(tmp_path):
    runner = CliRunner()
    for shell in ("bash", "zsh", "fish"):
        made = runner.invoke(cli, ["completion", shell], prog_name="svc")
        assert made.exit_code == 0, made.output
        assert "_SVC_COMPLETE" in made.output
        script = tmp_path / f"svc.{shell}"
        script.write_text(made.output)
        program = shutil.which(shell)
        if shell == "bash":
            assert program, "bash is needed to check the bash completion script"
            checked = subprocess.run([program, "-n", str(script)], capture_output=True, text=True, timeout=30)
            assert checked.returncode == 0, checked.stderr
            # Sourced, it registers the completion function for `svc`.
            loaded = subprocess.run([program, "-c", f"source {script} && complete -p svc"], capture_output=True,
                                    text=True, timeout=30)
            assert loaded.returncode == 0 and "_svc_completion" in loaded.stdout, loaded.stderr
        elif program:   # zsh and fish, where installed
            checked = subprocess.run([program, "-n", str(script)], capture_output=True, text=True, timeout=30)
            assert checked.returncode == 0, checked.stderr
    assert runner.invoke(cli, ["completion", "tcsh"]).exit_code == 2


def test_completion_completes_commands_and_subcommands(monkeypatch):
    """What the shell asks the program when Tab is pressed after `svc agents runs ap`."""
    result = CliRunner().invoke(cli, [], prog_name="svc", env={
        "_SVC_COMPLETE": "bash_complete", "COMP_WORDS": "svc agents runs ap", "COMP_CWORD": "3"})
    assert "approve" in result.output and "cancel" not in result.output
