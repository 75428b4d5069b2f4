"""A cell that stops holding a tenant (a secondary dropped, a move given up) deletes the tenant's
rate-limit counters there at once, with its copies: those a request sent to that cell wrote (answered
421 there) would otherwise wait for DynamoDB's TTL, up to two windows, and the residency audit would
find them out of place. Another tenant's counters stay. On the moto server, under the move function's
role; this cell stands for the other one."""

from __future__ import annotations

from devstack import iam
from svc_core.adapters import aws
from svc_core.auth import rate_limit
from svc_core.data import cell_tables
from svc_core.domain import tenant_moves
from svc_core.platform.config import settings


def counters() -> set[str]:
    pages = aws.client("dynamodb").get_paginator("scan").paginate(TableName=settings().rate_limits_table)
    return {item["pk"]["S"] for page in pages for item in page.get("Items", [])}


def test_deleting_a_tenants_copies_deletes_its_counters_and_its_keys_at_once_and_leaves_anothers(stack):
    tenant_id, other = stack.new_tenant(), stack.new_tenant("Other")
    key, their_key = stack.new_key(tenant_id), stack.new_key(other)
    shards = rate_limit.tenant_counter_shards(100_000, settings().rate_limit_window_seconds)   # enterprise's: 4
    for shard in range(shards):   # each of them met, as consume_tenant meets them at random
        rate_limit.consume(rate_limit.tenant_key(tenant_id, shard))
    rate_limit.consume(key["id"])
    rate_limit.consume(rate_limit.tenant_key(other))
    rate_limit.consume(their_key["id"])
    mine = {rate_limit.tenant_key(tenant_id, shard) for shard in range(shards)} | {key["id"]}
    theirs = {rate_limit.tenant_key(other), their_key["id"]}
    assert mine | theirs <= counters()

    here = cell_tables.here()
    with iam.acting_as("TenantMoveFunction"):
        tenant_moves.Mover({"tenantId": tenant_id, "status": "failed"}, here, here).delete_copies()

    left = counters()
    assert not mine & left, sorted(mine & left)
    assert theirs <= left
