"""What the end-to-end tests of moves between cells share: a tenant's client that follows a 421 as the
library does, the tenant's items and objects in a cell, its event log and its move as the API answers
them (tests/e2e/test_tenant_move.py, tests/e2e/test_tenant_move_deliveries.py)."""

from __future__ import annotations

import httpx


class Routed:
    """An HTTP client of a tenant that follows a 421 to the cell it names, as the library does."""

    def __init__(self, base_url: str, key: str) -> None:
        self.base_url, self.key, self.moves = base_url, key, []
        self.http = httpx.Client(timeout=30, headers={"Authorization": f"Bearer {key}"})

    def call(self, method: str, path: str, **kwargs) -> httpx.Response:
        answer = self.http.request(method, self.base_url + path, **kwargs)
        if answer.status_code == 421:
            self.base_url = answer.json()["error"]["details"]["baseUrl"]
            self.moves.append(self.base_url)
            answer = self.http.request(method, self.base_url + path, **kwargs)
        return answer


def tenant_items(cell, table: str, tenant_id: str) -> list[dict]:
    """The items of the cell's table (its variable, e.g. PROJECTS_TABLE) whose tenantId is the tenant's."""
    client, name, items, start = cell.dynamodb(), cell.environment[table], [], None
    while True:
        page = client.scan(TableName=name, **({"ExclusiveStartKey": start} if start else {}))
        items += [i for i in page["Items"] if i.get("tenantId", {}).get("S") == tenant_id]
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def objects(cell, prefix: str) -> dict[str, str]:
    s3, bucket = cell.client("s3"), cell.environment["PROJECT_FILES_BUCKET"]
    return {o["Key"]: o["ETag"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])}


def events(routed: Routed) -> list[dict]:
    """The tenant's whole event log (GET /events, every page)."""
    found, cursor = [], None
    while True:
        page = routed.call("GET", "/api/v1/events", params={"limit": 100, **({"cursor": cursor} if cursor else {})})
        assert page.status_code == 200, page.text
        data = page.json()["data"]
        found += data["items"]
        cursor = data.get("nextCursor")
        if not cursor:
            return found


def move_of(routed: Routed, tenant_id: str) -> dict | None:
    """The move as GET answers it; None for an answer of another kind (a 503 would be a fault: said so)."""
    answer = routed.call("GET", f"/api/v1/regions/migrations/{tenant_id}")
    assert answer.status_code in (200, 421), answer.text
    return answer.json()["data"] if answer.status_code == 200 else None
