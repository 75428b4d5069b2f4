"""What the dashboard's browser tests share: an account of their own (a new owner and tenant each,
so no test sees another's keys or allowlist), signing in through the page, axe-core's verdict on a
page, and a screenshot of each page at a laptop's and a phone's width, kept as a CI artifact
(.artifacts/dashboard/, not committed)."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "dashboard" / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOTS = Path(os.environ.get("ARTIFACTS_DIR", ROOT / ".artifacts")) / "dashboard"
LAPTOP = {"width": 1366, "height": 860}
PHONE = {"width": 390, "height": 844}


@dataclass
class Account:
    email: str
    password: str
    tenant_id: str
    user_id: str


@dataclass
class Dashboard:
    stack: Any
    server: Any

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def api(self) -> str:
        return self.stack.base_url + "/api/v1"

    def new_account(self, plan: str = "free", name: str = "Acme") -> Account:
        """A new user owning a new tenant on the plan (made as the service makes them)."""
        from svc_core.domain.tenants import create_tenant_with_owner, set_plan
        email = f"owner-{secrets.token_hex(4)}@example.com"
        password = secrets.token_urlsafe(18)
        made = create_tenant_with_owner(tenant_name=name, email=email, password=password, user_name="Owner")
        if plan != "free":
            set_plan(made["tenant"]["id"], plan)
        return Account(email=email, password=password, tenant_id=made["tenant"]["id"], user_id=made["user"]["id"])

    def sign_in(self, page, account: Account, path: str = "/") -> None:
        """Open the dashboard, sign in through its form and wait for the page at `path`."""
        page.goto(f"{self.url}/#{path}")
        page.get_by_label("E-mail").fill(account.email)
        page.get_by_label("Password").fill(account.password)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_role("button", name="Sign out").wait_for()


def serious_violations(page) -> list[dict]:
    """axe-core's serious and critical violations on the page as it is (axe run in the page, its
    script read from dashboard/node_modules: nothing fetched)."""
    page.evaluate(AXE.read_text())
    found = page.evaluate("""async () => {
        const result = await axe.run(document, {resultTypes: ["violations"]});
        return result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
                                              nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5)}));
    }""")
    return [v for v in found if v["impact"] in ("serious", "critical")]


def check_page(page, name: str) -> None:
    """axe finds no serious violation, at a laptop's width and a phone's, and nothing is wider than
    the phone's screen; a screenshot of each width is kept."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for label, size in (("laptop", LAPTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        violations = serious_violations(page)
        assert violations == [], f"{name} at {label} width: {violations}"
        page.screenshot(path=str(SCREENSHOTS / f"{name}-{label}.png"), full_page=True)
        if label == "phone":
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"{name} is {overflow}px wider than a phone's screen"
    page.set_viewport_size(LAPTOP)
