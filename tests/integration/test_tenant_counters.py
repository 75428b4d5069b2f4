"""The tenant's counters (seats, owners, projects): changed in the transaction of what they count,
never past their bounds, on moto and on DynamoDB Local; a tenant stored before a counter existed
counts as its default."""

from __future__ import annotations

import pytest

from svc_core.data import tenants_table, users_table
from svc_core.data.common import ConditionFailed, transact
from svc_core.platform import ids
from svc_core.platform.config import settings


def _tenant(data_backend, **counters) -> str:
    tenant_id = ids.new_id("ten")
    transact([tenants_table.put_new({"id": tenant_id, "name": "T", "plan": "free", "status": "active",
                                     "created_at": "2026-11-26T00:00:00.000Z", **counters})])
    return tenant_id


def _value(data_backend, tenant_id: str, counter: str):
    return data_backend.item(settings().tenants_table, {"id": tenant_id}).get(counter)


def test_a_seat_is_taken_up_to_the_limit_and_no_further(data_backend):
    tenant_id = _tenant(data_backend, seatsUsed=1)
    transact([tenants_table.count_entry(tenant_id, "seatsUsed", 1, at_most=3)])
    transact([tenants_table.count_entry(tenant_id, "seatsUsed", 1, at_most=3)])
    assert _value(data_backend, tenant_id, "seatsUsed") == 3
    with pytest.raises(ConditionFailed):
        transact([tenants_table.count_entry(tenant_id, "seatsUsed", 1, at_most=3)])
    assert _value(data_backend, tenant_id, "seatsUsed") == 3
    transact([tenants_table.count_entry(tenant_id, "seatsUsed", -1)])
    assert _value(data_backend, tenant_id, "seatsUsed") == 2


def test_a_tenant_without_the_counter_counts_from_its_default(data_backend):
    tenant_id = _tenant(data_backend)   # written before counters: one seat (the owner), one owner
    with pytest.raises(ConditionFailed):  # the only owner cannot go
        transact([tenants_table.count_entry(tenant_id, "owners", -1, at_least=1)])
    assert _value(data_backend, tenant_id, "owners") is None
    transact([tenants_table.count_entry(tenant_id, "seatsUsed", 1, at_most=2)])
    assert _value(data_backend, tenant_id, "seatsUsed") == 2
    with pytest.raises(ConditionFailed):
        transact([tenants_table.count_entry(tenant_id, "seatsUsed", 1, at_most=2)])
    transact([tenants_table.count_entry(tenant_id, "projectCount", 1, at_most=1)])
    with pytest.raises(ConditionFailed):
        transact([tenants_table.count_entry(tenant_id, "projectCount", 1, at_most=1)])


def test_the_last_owner_stays_and_a_failed_bound_writes_nothing_else(data_backend):
    tenant_id = _tenant(data_backend, owners=2)
    user_id = ids.new_id("usr")
    transact([users_table.put_membership(user_id, tenant_id, "owner", "2026-11-26T00:00:00.000Z")])
    transact([tenants_table.count_entry(tenant_id, "owners", -1, at_least=1),
              users_table.set_role_entry(user_id, tenant_id, "admin", "owner", "2026-11-26T00:00:01.000Z")])
    assert _value(data_backend, tenant_id, "owners") == 1
    other = ids.new_id("usr")
    transact([users_table.put_membership(other, tenant_id, "owner", "2026-11-26T00:00:00.000Z")])
    with pytest.raises(ConditionFailed):
        transact([tenants_table.count_entry(tenant_id, "owners", -1, at_least=1),
                  users_table.delete_membership_entry(other, tenant_id, "owner")])
    assert users_table.membership(other, tenant_id)["role"] == "owner"
    assert _value(data_backend, tenant_id, "owners") == 1


def test_a_counter_on_a_missing_tenant_is_refused(data_backend):
    with pytest.raises(ConditionFailed):
        transact([tenants_table.count_entry(ids.new_id("ten"), "seatsUsed", 1, at_most=3)])


def test_members_of_lists_a_tenants_memberships_in_pages(data_backend):
    tenant_id = _tenant(data_backend)
    users = sorted(ids.new_id("usr") for _ in range(5))
    transact([users_table.put_membership(u, tenant_id, "member", "2026-11-26T00:00:00.000Z", email=f"{i}@x.test",
                                         name=f"N{i}") for i, u in enumerate(users)])
    transact([users_table.put_membership(ids.new_id("usr"), ids.new_id("ten"), "member", "2026-11-26T00:00:00.000Z")])
    seen, after = [], None
    while True:
        page, after = users_table.members_of(tenant_id, 2, after)
        seen += page
        if after is None:
            break
    assert [m["userId"] for m in seen] == users
    assert {m["email"] for m in seen} == {f"{i}@x.test" for i in range(5)}
