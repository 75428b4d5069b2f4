"""IAM's evaluation of identity-based policies, for the local stack's per-function roles.

What AWS does for a request by a role with identity policies only (no permissions boundary, no
session policy, no SCP; resource policies are not consulted: docs/local-stack.md says why):
an explicit Deny in any applicable statement wins; else an applicable Allow allows; else the
request is implicitly denied. A statement applies when its Action (or NotAction) matches the
action, its Resource (or NotResource) matches the resource ARN, and every condition holds.

Matching as IAM does it: actions case-insensitively, resources case-sensitively, `*` any run of
characters (`/` and `:` included) and `?` one character, in both. Conditions: the operators of
the String, Arn and Bool families, their IfExists forms and the ForAnyValue/ForAllValues set
qualifiers; condition keys are case-insensitive, and a key the request does not carry makes an
operator false (true for the IfExists forms and for negated operators). An operator this module
does not know makes its statement raise: a policy is never read more leniently than AWS would.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

Decision = Literal["allow", "explicit-deny", "implicit-deny"]


@lru_cache(maxsize=4096)
def _pattern(text: str, ignore_case: bool) -> re.Pattern[str]:
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in text)
    return re.compile("".join(parts), re.DOTALL | (re.IGNORECASE if ignore_case else 0))


def matches(pattern: str, value: str, *, ignore_case: bool = False) -> bool:
    return _pattern(pattern, ignore_case).fullmatch(value) is not None


def _listed(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _as_bool(text: str) -> str:
    return text.strip().lower()


# operator (without IfExists and set qualifiers) -> (compare(policy value, request value), negated)
_OPERATORS: dict[str, tuple[Any, bool]] = {
    "StringEquals": (lambda p, v: p == v, False),
    "StringNotEquals": (lambda p, v: p == v, True),
    "StringEqualsIgnoreCase": (lambda p, v: p.lower() == v.lower(), False),
    "StringNotEqualsIgnoreCase": (lambda p, v: p.lower() == v.lower(), True),
    "StringLike": (lambda p, v: matches(p, v), False),
    "StringNotLike": (lambda p, v: matches(p, v), True),
    "ArnEquals": (lambda p, v: matches(p, v), False),   # ArnEquals takes wildcards as ArnLike does
    "ArnLike": (lambda p, v: matches(p, v), False),
    "ArnNotEquals": (lambda p, v: matches(p, v), True),
    "ArnNotLike": (lambda p, v: matches(p, v), True),
    "Bool": (lambda p, v: _as_bool(p) == _as_bool(v), False),
}


def _condition_holds(operator: str, key: str, policy_values: list[str], context: Mapping[str, list[str]]) -> bool:
    qualifier, _, name = operator.partition(":") if ":" in operator else ("", "", operator)
    if_exists = name.endswith("IfExists")
    name = name.removesuffix("IfExists")
    if name == "Null":
        present = key.lower() in context
        return all((v.lower() == "true") != present for v in policy_values)
    if name not in _OPERATORS:
        raise ValueError(f"condition operator {operator} is not evaluated here")
    compare, negated = _OPERATORS[name]
    values = context.get(key.lower())
    if values is None:
        return True if (if_exists or negated or qualifier == "ForAllValues") else False
    if qualifier == "ForAllValues":
        return all(any(compare(p, v) for p in policy_values) != negated for v in values)
    if qualifier == "ForAnyValue":
        return any(any(compare(p, v) for p in policy_values) != negated for v in values)
    # A single-valued key: a match of any policy value (negated: of none).
    found = any(compare(p, v) for p in policy_values for v in values)
    return found != negated


@dataclass(frozen=True)
class Request:
    action: str                                  # "dynamodb:GetItem"
    resource: str                                # an ARN, or "*" for actions without resource types
    context: tuple[tuple[str, tuple[str, ...]], ...] = ()   # condition keys (lower case) and values

    @staticmethod
    def of(action: str, resource: str, context: Mapping[str, Iterable[str]] | None = None) -> Request:
        return Request(action, resource, tuple(sorted((k.lower(), tuple(v)) for k, v in (context or {}).items())))


def _statement_applies(statement: Mapping[str, Any], request: Request) -> bool:
    if "Action" in statement:
        if not any(matches(a, request.action, ignore_case=True) for a in _listed(statement["Action"])):
            return False
    elif any(matches(a, request.action, ignore_case=True) for a in _listed(statement.get("NotAction"))):
        return False
    if "Resource" in statement:
        if not any(matches(r, request.resource) for r in _listed(statement["Resource"])):
            return False
    elif any(matches(r, request.resource) for r in _listed(statement.get("NotResource"))):
        return False
    context = {k: list(v) for k, v in request.context}
    for operator, keys in (statement.get("Condition") or {}).items():
        for key, values in keys.items():
            if not _condition_holds(operator, key, _listed(values), context):
                return False
    return True


def statements(policies: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Every statement of the policy documents, in order."""
    found: list[Mapping[str, Any]] = []
    for document in policies:
        listed = document.get("Statement", [])
        found.extend(listed if isinstance(listed, list) else [listed])
    return found


def evaluate(policy_statements: Iterable[Mapping[str, Any]], request: Request) -> tuple[Decision, list[int]]:
    """The decision, and the indexes of the statements that allowed it (empty unless allowed)."""
    allowed: list[int] = []
    for index, statement in enumerate(policy_statements):
        if not _statement_applies(statement, request):
            continue
        if statement.get("Effect") == "Deny":
            return "explicit-deny", []
        if statement.get("Effect") == "Allow":
            allowed.append(index)
    return ("allow", allowed) if allowed else ("implicit-deny", [])
