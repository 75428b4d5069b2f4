"""Helpers for the regions and storage tests: calls to the RegionsFunction and the tenant item."""

from __future__ import annotations

from typing import Any

from svc_core.platform.config import settings
from tests.support.functions import Reply, call

MISSING_TENANT = "ten_01JD2Q7ZB6V8S3K4X9W2M5N7PA"


def regions_api(event: str, key: str | None, **kwargs: Any) -> Reply:
    return call("regions", f"Regions-{event}", token=key, **kwargs)


def get_prefs(key: str, tenant_id: str, **kw: Any) -> Reply:
    return regions_api("GetPreferences", key, path_params={"tenantId": tenant_id}, **kw)


def patch_prefs(key: str, tenant_id: str, body: Any, **kw: Any) -> Reply:
    return regions_api("UpdatePreferences", key, path_params={"tenantId": tenant_id}, body=body, **kw)


def get_storage(key: str, tenant_id: str, **kw: Any) -> Reply:
    return regions_api("GetStorage", key, path_params={"tenantId": tenant_id}, **kw)


def put_storage(key: str, tenant_id: str, body: Any, **kw: Any) -> Reply:
    return regions_api("PutStorage", key, path_params={"tenantId": tenant_id}, body=body, **kw)


def validate(key: str, tenant_id: str, body: Any = None, **kw: Any) -> Reply:
    return regions_api("ValidateStorage", key, path_params={"tenantId": tenant_id}, body=body, **kw)


def check_feature(key: str, tenant_id: str, feature: str, **kw: Any) -> Reply:
    return regions_api("CheckFeature", key, path_params={"tenantId": tenant_id, "featureKey": feature}, **kw)


def routing_info(key: str, **kw: Any) -> Reply:
    return regions_api("RoutingInfo", key, **kw)


def set_plan(tenant_id: str, plan: str) -> None:
    from svc_core.adapters import aws
    aws.client("dynamodb").update_item(TableName=settings().tenants_table, Key={"id": {"S": tenant_id}},
                                       UpdateExpression="SET #plan = :plan", ExpressionAttributeNames={"#plan": "plan"},
                                       ExpressionAttributeValues={":plan": {"S": plan}})


def tenant_item(tenant_id: str) -> dict[str, Any] | None:
    from svc_core.data import tenants_table
    return tenants_table.get_consistent(tenant_id)


def tenant_on(stack, plan: str, scopes: list[str] | None = None) -> tuple[str, str]:
    tenant_id, key = stack.tenant_with_key(scopes)
    set_plan(tenant_id, plan)
    return tenant_id, key
