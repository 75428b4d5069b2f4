"""Conversion between Python values and DynamoDB's attribute-value JSON.

A small replacement for boto3.dynamodb.types (which would import boto3, see aws.py).
Numbers are ints (the service stores no floats); strings, booleans, None, lists, maps and
string sets are supported.
"""

from __future__ import annotations

from typing import Any


def to_attr(value: Any) -> dict[str, Any]:
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int):
        return {"N": str(value)}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, (list, tuple)):
        return {"L": [to_attr(v) for v in value]}
    if isinstance(value, dict):
        return {"M": {k: to_attr(v) for k, v in value.items()}}
    if isinstance(value, (set, frozenset)):
        return {"SS": sorted(value)}
    raise TypeError(f"cannot store {type(value).__name__} in DynamoDB")


def from_attr(attr: dict[str, Any]) -> Any:
    (kind, value), = attr.items()
    if kind == "S":
        return value
    if kind == "N":
        return int(value)
    if kind == "BOOL":
        return value
    if kind == "NULL":
        return None
    if kind == "L":
        return [from_attr(v) for v in value]
    if kind == "M":
        return {k: from_attr(v) for k, v in value.items()}
    if kind == "SS":
        return set(value)
    raise TypeError(f"unsupported DynamoDB type {kind}")


def to_item(values: dict[str, Any]) -> dict[str, Any]:
    return {k: to_attr(v) for k, v in values.items() if v is not None}


def from_item(item: dict[str, Any] | None) -> dict[str, Any] | None:
    if item is None:
        return None
    return {k: from_attr(v) for k, v in item.items()}


def values(**kwargs: Any) -> dict[str, Any]:
    """ExpressionAttributeValues from keyword arguments: values(now=1) -> {':now': {'N': '1'}}."""
    return {f":{k}": to_attr(v) for k, v in kwargs.items()}
