"""The permission table of docs/organizations.md and the roles' scopes (auth/roles.py) say the same:
every scope has its row, and each cell is yes exactly when the role holds the row's scope."""

from __future__ import annotations

import re
from pathlib import Path

from svc_core.auth.roles import ROLE_SCOPES, ROLES
from svc_core.auth.scopes import ALL_SCOPES

DOC = Path(__file__).resolve().parents[2] / "docs" / "organizations.md"


def table() -> dict[str, dict[str, str]]:
    """scope -> {role: cell} from the table whose header is Area | Operation | Scope | <roles>."""
    lines = DOC.read_text().splitlines()
    header = f"| Area | Operation | Scope | {' | '.join(ROLES)} |"
    start = lines.index(header)  # ValueError: the table's header changed, or a role was added
    rows: dict[str, dict[str, str]] = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        scope = re.fullmatch(r"`([a-z]+:[a-z]+)`", cells[2])
        assert scope, f"a row's scope is one `area:verb`: {line}"
        assert scope.group(1) not in rows, f"{scope.group(1)} has two rows"
        rows[scope.group(1)] = dict(zip(ROLES, cells[3:], strict=True))
    return rows


def test_every_scope_has_one_row_and_no_row_names_an_unknown_scope():
    assert set(table()) == ALL_SCOPES


def test_each_cell_says_whether_the_role_holds_the_scope():
    wrong = [(scope, role, cell) for scope, cells in table().items() for role, cell in cells.items()
             if cell not in ("yes", "no") or (cell == "yes") != (scope in ROLE_SCOPES[role])]
    assert wrong == [], "docs/organizations.md's permission table differs from auth/roles.py ROLE_SCOPES"


def test_the_roles_table_of_the_same_page_names_every_role():
    text = DOC.read_text()
    for role in ROLES:
        assert f"\n| {role} |" in text
