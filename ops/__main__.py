"""Operator commands, run with the environment template.yaml gives the functions:

    python -m ops tenants create NAME --owner-email EMAIL [--owner-name NAME]
                                        a tenant and its owner (an admin of it); the owner's password is printed once
    python -m ops users disable EMAIL   refuse sign-in (403), end every sign-in, revoke the CLI keys
    python -m ops users enable EMAIL    allow sign-in again (ended sign-ins and keys stay ended)
    python -m ops tenants set-plan TENANT_ID PLAN     free, starter, growth or enterprise
    python -m ops tenants suspend TENANT_ID           every credential of the tenant gets 403
    python -m ops tenants activate TENANT_ID
    python -m ops tenants failover TENANT_ID          run against the tenant's secondary cell (its home may be
                                        gone): the secondary becomes its home (ops/replicas.py)
    python -m ops tenants replica TENANT_ID [--seed]  the state of the tenant's copy in its secondary cell;
                                        --seed queues a seed (run against the home cell), which makes it equal
    python -m ops gift-cards issue --credits N [--count K] [--expires-in-days D]
                                        new gift cards; their codes are printed once, only their hashes kept
    python -m ops billing adjust TENANT_ID MICRO_CREDITS --reason TEXT
                                        add (or, negative, take) credits, as an adjustment in the ledger
    python -m ops billing import TENANT_ID FILE
                                        replay ledger entries, a JSON object a line {kind, amount, reason, reference?}
    python -m ops directory backfill    the global directory's items for data stored before it existed
                                        (idempotent: writes only what is missing; ops/directory.py)
    python -m ops residency audit [--local PORT,PORT | --stack NAME --region R ...] [--json] [--no-queues]
                                        every cell's items, objects and queued messages in their tenant's allowed
                                        regions (ops/residency.py)
    python -m ops residency rules       how the audit finds the tenant of each table's items and queue's messages

Against a deployed stack: --stack NAME (its CloudFormation stack name, e.g. svc-api-dev) reads the
stack's outputs (DescribeStacks, with the AWS credentials and region of your profile, or --region) and
sets the variables the functions get from them (template.yaml's Globals). --local uses a running local
stack's environment instead; there --stack names it by its port (its file is
.local/stacks/PORT/local-stack-env.json) or its --persist DIR; without --stack, port 3000's, or the
only stack running. Without either, the environment is used as it is (export the variables yourself).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STACKS = ROOT / ".local" / "stacks"
ENVIRONMENT_FILE = "local-stack-env.json"
sys.path.insert(0, str(ROOT / "layers" / "shared" / "python"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ops", description=__doc__.splitlines()[0])
    parser.add_argument("--local", action="store_true", help="use a running local stack's environment")
    parser.add_argument("--stack", default="", metavar="NAME|PORT|DIR",
                        help="a deployed stack's CloudFormation name; with --local: the local stack's port or its "
                             "--persist DIR (default: port 3000's, or the only one running)")
    parser.add_argument("--region", default=None, help="the deployed stack's region (default: your profile's)")
    commands = parser.add_subparsers(dest="noun", required=True)
    users = commands.add_parser("users", help="user accounts").add_subparsers(dest="verb", required=True)
    for verb, text in (("disable", "disable an account"), ("enable", "enable an account again")):
        users.add_parser(verb, help=text).add_argument("email")
    tenants = commands.add_parser("tenants", help="tenants").add_subparsers(dest="verb", required=True)
    create = tenants.add_parser("create", help="a tenant and its owner (the first admin of a new deployment)")
    create.add_argument("name")
    create.add_argument("--owner-email", required=True)
    create.add_argument("--owner-name", default="Administrator")
    set_plan = tenants.add_parser("set-plan", help="move a tenant to another plan")
    set_plan.add_argument("tenant_id")
    set_plan.add_argument("plan", choices=("free", "starter", "growth", "enterprise"))
    for verb, text in (("suspend", "suspend a tenant"), ("activate", "make a suspended tenant active")):
        tenants.add_parser(verb, help=text).add_argument("tenant_id")
    failover = tenants.add_parser("failover", help="home a tenant in its secondary cell (run against that cell)")
    failover.add_argument("tenant_id")
    failover.add_argument("--json", action="store_true", help="the outcome as one JSON object")
    replica = tenants.add_parser("replica", help="the tenant's copy in its secondary cell")
    replica.add_argument("tenant_id")
    replica.add_argument("--seed", action="store_true", help="queue a seed of the copy (run against the home cell)")
    cards = commands.add_parser("gift-cards", help="gift cards").add_subparsers(dest="verb", required=True)
    issue = cards.add_parser("issue", help="issue gift cards (the codes are printed once)")
    issue.add_argument("--credits", type=int, required=True, help="credits each card is worth (1 to 10000)")
    issue.add_argument("--count", type=int, default=1, help="how many cards (1 to 1000)")
    issue.add_argument("--expires-in-days", type=int, default=365)
    billing = commands.add_parser("billing", help="credit ledger").add_subparsers(dest="verb", required=True)
    adjust = billing.add_parser("adjust", help="add or take micro-credits (1 credit = 1000000)")
    adjust.add_argument("tenant_id")
    adjust.add_argument("micro_credits", type=int)
    adjust.add_argument("--reason", required=True)
    replay = billing.add_parser("import", help="replay ledger entries from a JSON-lines file")
    replay.add_argument("tenant_id")
    replay.add_argument("file", type=Path)
    directory = commands.add_parser("directory", help="the global directory").add_subparsers(dest="verb", required=True)
    directory.add_parser("backfill", help="write the directory's missing items for this cell's data")
    residency = commands.add_parser("residency", help="data residency").add_subparsers(dest="verb", required=True)
    audit = residency.add_parser("audit", help="find items, objects and messages outside their tenant's allowed regions "
                                                "(exit 1 on any)")
    audit.add_argument("--local", dest="local_cells", action="append", default=[], metavar="PORT[,PORT]",
                       help="local cells, by their ports (or --persist folders)")
    audit.add_argument("--stack", dest="cell_stacks", action="append", default=[], metavar="NAME",
                       help="a deployed cell's stack name; give each its --region, in the same order")
    audit.add_argument("--region", dest="cell_regions", action="append", default=[], metavar="REGION")
    audit.add_argument("--json", action="store_true", help="the summary and every finding as JSON")
    audit.add_argument("--no-queues", dest="queues", action="store_false",
                       help="leave the queues alone (reading a message adds one to its receive count)")
    residency.add_parser("rules", help="how the audit finds the owner of each table's items and queue's messages")
    args = parser.parse_args(argv)

    if args.local:
        found = local_environment(args.stack)
        if isinstance(found, str):
            parser.error(found)
        os.environ.update(json.loads(found.read_text()))
    elif args.stack:
        found = stack_environment(args.stack, args.region)
        if isinstance(found, str):
            parser.error(found)
        os.environ.update(found)

    if args.noun == "residency":
        return _residency(parser, args)
    if args.noun == "users":
        return _users(args)
    if args.noun in ("gift-cards", "billing"):
        return _billing(args)
    if args.noun == "directory":
        from ops.directory import backfill
        report = backfill()
        print(json.dumps(report))
        return 1 if report["emailConflicts"] else 0
    return _tenants(args)


def local_environment(stack: str) -> Path | str:
    """The environment file of the local stack named by a port or a --persist folder; else why not."""
    if stack.isdigit():
        candidates = [STACKS / stack / ENVIRONMENT_FILE]
    elif stack:
        candidates = [Path(stack).expanduser() / ENVIRONMENT_FILE]
    else:
        default = STACKS / "3000" / ENVIRONMENT_FILE
        candidates = [default] if default.exists() else sorted(STACKS.glob(f"*/{ENVIRONMENT_FILE}"))
    if len(candidates) == 1 and candidates[0].exists():
        return candidates[0]
    if len(candidates) > 1:
        ports = ", ".join(c.parent.name for c in candidates)
        return f"several local stacks are running (ports {ports}): name one, e.g. --stack {candidates[0].parent.name}"
    return (f"{candidates[0] if candidates else STACKS / '<port>' / ENVIRONMENT_FILE} is missing: start the local "
            "stack with scripts/dev (or name its port or --persist folder)")


def stack_environment(stack_name: str, region: str | None = None) -> dict[str, str] | str:
    """The functions' environment of a deployed stack, from its outputs: each output is named by the
    logical id of the resource that template.yaml's Globals give a variable (UsersTable -> USERS_TABLE).
    Else why not."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    from devstack.template import load  # the template of this checkout: the variables and their resources
    from ops.residency import resource_variables

    try:
        cloudformation = boto3.client("cloudformation", region_name=region)
        [stack] = cloudformation.describe_stacks(StackName=stack_name)["Stacks"]
    except (ClientError, BotoCoreError) as exc:
        return f"cannot read the stack {stack_name}: {exc}"
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs") or []}
    environment = {name: outputs[logical_id] for logical_id, name in resource_variables(load()).items()
                   if logical_id in outputs}
    if "USERS_TABLE" not in environment:
        return f"the stack {stack_name} has no UsersTable output: deploy this version of template.yaml first"
    if region:
        environment["AWS_REGION"] = environment["AWS_DEFAULT_REGION"] = region
    return environment


def _residency(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from devstack.template import load
    from ops.residency import QUEUE_RULES, TABLE_RULES, Cell, deployed_queues, run

    if args.verb == "rules":
        for name, rule in [*TABLE_RULES.items(), *QUEUE_RULES.items()]:
            print(f"{name:<32} {rule.how}")
        return 0
    cells: list[Cell] = []
    if args.local_cells:
        for name in (n for given in args.local_cells for n in given.split(",") if n):
            found = local_environment(name)
            if isinstance(found, str):
                parser.error(found)
            environment = json.loads(found.read_text())
            if not environment.get("AWS_REGION"):
                parser.error(f"{found} names no AWS_REGION: which region is the cell's?")
            cells.append(Cell(environment["AWS_REGION"], environment, name))
    elif args.cell_stacks:
        if len(args.cell_regions) != len(args.cell_stacks):
            parser.error("give each --stack its --region (in the same order)")
        for stack, region in zip(args.cell_stacks, args.cell_regions, strict=True):
            found = stack_environment(stack, region)
            if isinstance(found, str):
                parser.error(found)
            cells.append(Cell(region, found, stack, queues=deployed_queues(stack, region) if args.queues else {}))
    else:  # the environment as it is (--local / --stack before the command, or exported): one cell
        cells.append(Cell(os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION", ""),
                          dict(os.environ)))
    return run(cells, load(), args.json, queues=args.queues)


def _operator() -> str:
    import getpass
    return getpass.getuser()


def _billing(args: argparse.Namespace) -> int:
    from svc_core.domain import billing
    from svc_core.platform.errors import NotFound

    try:
        if args.noun == "gift-cards":
            result = billing.issue_gift_cards(args.credits, args.count, args.expires_in_days, f"operator:{_operator()}")
        elif args.verb == "import":
            rows = [json.loads(line) for line in args.file.read_text().splitlines() if line.strip()]
            result = {"imported": billing.import_entries(args.tenant_id, rows, _operator())}
        else:
            result = billing.adjust(args.tenant_id, args.micro_credits, args.reason, _operator())
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except NotFound:
        print(f"no tenant has the id {args.tenant_id}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


def _users(args: argparse.Namespace) -> int:
    from svc_core.data import users_table
    from svc_core.domain.accounts import set_user_status

    user_id = users_table.id_for_email(args.email)
    if user_id is None:
        print(f"no user has the e-mail {args.email}", file=sys.stderr)
        return 1
    print(json.dumps(set_user_status(user_id, "disabled" if args.verb == "disable" else "active")))
    return 0


def _tenants(args: argparse.Namespace) -> int:
    from svc_core.data.common import ConditionFailed
    from svc_core.domain import tenants

    if args.verb == "create":
        return _create_tenant(args)
    if args.verb in ("failover", "replica"):
        from ops.replicas import run
        return run(args)
    try:
        if args.verb == "set-plan":
            tenant = tenants.set_plan(args.tenant_id, args.plan)
        else:
            tenant = tenants.set_status(args.tenant_id, "suspended" if args.verb == "suspend" else "active")
    except ConditionFailed:
        print(f"no tenant has the id {args.tenant_id}", file=sys.stderr)
        return 1
    print(json.dumps({k: tenant[k] for k in ("id", "name", "plan", "status", "updated_at")}))
    return 0


def _create_tenant(args: argparse.Namespace) -> int:
    import secrets

    from svc_core.domain.tenants import create_tenant_with_owner
    from svc_core.platform.errors import Conflict

    password = secrets.token_urlsafe(18)
    try:
        made = create_tenant_with_owner(tenant_name=args.name, email=args.owner_email, user_name=args.owner_name,
                                        password=password)
    except Conflict as exc:
        print(exc.message, file=sys.stderr)
        return 1
    # The password is shown this once (only its hash is stored): give it to the owner to sign in with.
    print(json.dumps({"tenant": made["tenant"], "owner": {"id": made["user"]["id"], "email": made["user"]["email"],
                                                           "password": password}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
