"""Whether the tests run in CI, where a part that cannot run fails instead of skipping."""

import os


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
