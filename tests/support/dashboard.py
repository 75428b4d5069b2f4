"""What the dashboard's browser tests share: an account of their own (a new owner and tenant each,
so no test sees another's keys or allowlist), signing in through the page, axe-core's verdict on a
page, and a screenshot of each page at a laptop's and a phone's width, kept as a CI artifact
(.artifacts/dashboard/, not committed)."""

from __future__ import annotations

import os
import re
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

    def new_account(self, plan: str = "free", name: str = "Acme", email: str | None = None) -> Account:
        """A new user owning a new tenant on the plan (made as the service makes them); a new address
        unless one is given (one the stack has not seen)."""
        from svc_core.domain.tenants import create_tenant_with_owner, set_plan
        email = email or f"owner-{secrets.token_hex(4)}@example.com"
        password = secrets.token_urlsafe(18)
        made = create_tenant_with_owner(tenant_name=name, email=email, password=password, user_name="Owner")
        if plan != "free":
            set_plan(made["tenant"]["id"], plan)
        return Account(email=email, password=password, tenant_id=made["tenant"]["id"], user_id=made["user"]["id"])

    def client(self, account: Account):
        """An httpx client of the account's owner (a token minted as /auth/login mints it), to make
        or read back what the pages show."""
        import httpx

        from svc_core.auth import tokens
        from svc_core.auth.roles import ROLE_SCOPES
        token, _ = tokens.mint(subject=account.user_id, tenant_id=account.tenant_id,
                               scopes=ROLE_SCOPES["owner"], credential="user")
        return httpx.Client(base_url=self.api, headers={"Authorization": f"Bearer {token}"}, timeout=30)

    def sign_in(self, page, account: Account, path: str = "/") -> None:
        """Open the dashboard, sign in through its form and wait for the page at `path`."""
        page.goto(f"{self.url}/#{path}")
        page.get_by_label("E-mail").fill(account.email)
        page.get_by_label("Password").fill(account.password)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_role("button", name="Sign out").wait_for()


def open_dialog(page, button: str, title: str):
    """Press the page's "Create …" button and return the dialog it opens (named by its heading)."""
    page.get_by_role("button", name=button, exact=True).click()
    dialog = page.get_by_role("dialog", name=title)
    dialog.wait_for()
    return dialog


def row_action(page, row, action: str) -> None:
    """Open the row's actions menu ("Actions for <name>") and choose an item of it."""
    row.get_by_role("button", name=re.compile(r"^Actions for ")).click()
    page.get_by_role("menuitem", name=action, exact=True).click()


def short_id(value: str) -> str:
    """An id as the page shows it (format.ts's shortId): its prefix, the first 4 and the last 3
    characters of the rest, "key_01HX…9Z2"; at most 10 characters after the prefix, whole."""
    prefix = value[:value.index("_") + 1] if "_" in value else ""
    rest = value[len(prefix):]
    return value if len(rest) <= 10 else f"{prefix}{rest[:4]}…{rest[-3:]}"


def credits_text(micro: int, *, signed: bool = False, unit: bool = True) -> str:
    """Micro-credits as the page shows them (format.ts's credits and creditsText): at most two decimals,
    rounded half away from zero and only where needed; under 0.01 but not zero, two significant digits."""
    from decimal import ROUND_HALF_UP, Decimal
    value = Decimal(micro) / Decimal(1_000_000)
    if value != 0 and abs(value) < Decimal("0.005"):
        shown = format(Decimal(f"{value:.2g}").normalize(), "f")
    else:
        rounded = value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        whole, _, fraction = f"{abs(rounded):,.2f}".partition(".")
        fraction = fraction.rstrip("0")
        shown = f"{'-' if rounded < 0 else ''}{whole}{'.' + fraction if fraction else ''}"
    if signed and value > 0:
        shown = "+" + shown
    if not unit:
        return shown
    return f"{shown} {'credit' if shown.lstrip('+-') == '1' else 'credits'}"


def exact_credits(micro: int) -> str:
    """Micro-credits exactly, as the page's titles give them (format.ts's exactCredits)."""
    whole, fraction = divmod(abs(micro), 1_000_000)
    digits = f"{fraction:06d}".rstrip("0")
    return f"{'-' if micro < 0 else ''}{whole:,}{'.' + digits if digits else ''}"


def content_edges(page) -> list[dict]:
    """The right edge of each card and table of the page's content (not one inside a card), at the
    window's width: one content width means one edge."""
    return page.evaluate("""() => [...document.querySelectorAll("main .card, main .table-wrap")]
        .filter((el) => !el.parentElement.closest(".card, .table-wrap") && el.getBoundingClientRect().width > 0)
        .map((el) => ({what: el.className + " " + (el.getAttribute("aria-label") || el.getAttribute("aria-labelledby") || ""),
                       right: Math.round(el.getBoundingClientRect().right)}))""")


def toast(page, text: str):
    """The toast saying `text`, in the app's one toast region: a polite live region (role status) in
    the landmark "Notifications"."""
    return (page.get_by_role("region", name="Notifications").get_by_role("status")
            .get_by_test_id("toast").filter(has_text=text))


def axe_violations(page) -> list[dict]:
    """axe-core's violations on the page as it is, of any impact (axe run in the page, its script read
    from dashboard/node_modules: nothing fetched)."""
    page.evaluate(AXE.read_text())
    return page.evaluate("""async () => {
        const result = await axe.run(document, {resultTypes: ["violations"]});
        return result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
                                              nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5)}));
    }""")


def serious_violations(page, every_impact: bool = False) -> list[dict]:
    """axe-core's serious and critical violations on the page as it is (every violation, of any
    impact, with `every_impact`)."""
    return [v for v in axe_violations(page) if every_impact or v["impact"] in ("serious", "critical")]


def check_page(page, name: str, every_impact: bool = False) -> None:
    """axe finds no serious violation (none of any impact, with `every_impact`), at a laptop's width
    and a phone's, and nothing is wider than the phone's screen; a screenshot of each width is kept."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for label, size in (("laptop", LAPTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        violations = serious_violations(page, every_impact)
        assert violations == [], f"{name} at {label} width: {violations}"
        page.screenshot(path=str(SCREENSHOTS / f"{name}-{label}.png"), full_page=True)
        if label == "laptop":
            edges = content_edges(page)
            assert len({e["right"] for e in edges}) <= 1, f"{name}: cards and tables end at different widths: {edges}"
        if label == "phone":
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"{name} is {overflow}px wider than a phone's screen"
    page.set_viewport_size(LAPTOP)
