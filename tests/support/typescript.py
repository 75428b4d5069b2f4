"""The TypeScript client's package, for the tests that run its tools (its own node_modules: `npm ci` in
clients/typescript, done by scripts/bootstrap_node.sh)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "typescript"


def npx(tool: str, *args: str) -> list[str]:
    """The command line of one of the package's own tools (never a download)."""
    return [str(PACKAGE / "node_modules" / ".bin" / tool), *args]
