"""The secondary region, for an operator (svc_core/domain/tenant_replicas.py says how the copy is kept):

    python -m ops --stack NAME --region SECONDARY tenants failover TENANT_ID [--json]
    python -m ops --stack NAME --region HOME tenants replica TENANT_ID [--seed]

The failover runs against the secondary cell's stack alone, so it works with the home region lost. It
prints where the tenant lives now and the state its copy was in (current: seeded and carried since;
seeding or failed: what the secondary serves may lack part of the tenant's content).
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def run(args: argparse.Namespace) -> int:
    from svc_core.data import tenant_move_queue
    from svc_core.domain import tenant_replicas

    if args.verb == "replica":
        view = tenant_replicas.replica_view(args.tenant_id)
        if args.seed:
            tenant_move_queue.send_job(args.tenant_id, "replica")
            view["seedQueued"] = True
        print(json.dumps(view, default=str))
        return 0
    started = time.monotonic()
    try:
        outcome = tenant_replicas.failover(args.tenant_id)
    except tenant_replicas.NotSecondary as exc:
        print(f"not failed over: {exc}", file=sys.stderr)
        return 1
    outcome["tookMs"] = round((time.monotonic() - started) * 1000)
    if args.json:
        print(json.dumps(outcome))
    elif outcome["already"]:
        print(f"{args.tenant_id} already lives in {outcome['toRegion']} (failed over at {outcome['failedOverAt']})")
    else:
        print(f"{args.tenant_id} now lives in {outcome['toRegion']} (was {outcome['fromRegion']}; its copy was "
              f"{outcome['replicaStatus'] or 'never seeded'}); {outcome['fromRegion']} holds its copy once it answers")
    return 0
