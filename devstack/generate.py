"""Every derived file of the repository, written from its source (run it as scripts/generate):

- functions/meta/openapi.json   from the API functions' routes and models (devstack/openapi.py)
- events/*.json                 from template.yaml's Api routes and the document's request models
                                (devstack/sample_events.py)
- clients/typescript/src/schema.ts and operations.ts   the TypeScript client's types and operations,
                                from the document (devstack/typescript_client.py)

    scripts/generate           # write them all
    scripts/generate events    # only events/ (and scripts/generate openapi: only the document)
    scripts/generate --check   # exit 1, naming each stale file, when any differs from what would be written

A unit test (tests/unit/test_generated_files.py) fails the same way, so a route added to the
template or a changed response model cannot go unnoticed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from devstack import openapi, sample_events, typescript_client
from devstack.template import ROOT

COMMAND = "scripts/generate"


TARGETS = ("openapi", "events", "typescript")


def derived_files(targets: tuple[str, ...] = TARGETS) -> dict[Path, str]:
    """Each derived file of these targets and the text it should have (the events are built from the
    document as it would be written, not as committed)."""
    document = openapi.render()
    files = {openapi.DOCUMENT: document} if "openapi" in targets else {}
    if "events" in targets:
        files.update(sample_events.render(document=json.loads(document)))
    if "typescript" in targets:
        files.update(typescript_client.render(document))
    return files


def stale(files: dict[Path, str] | None = None) -> list[str]:
    """What differs from what would be written: missing or changed files, and files no source writes."""
    files = derived_files() if files is None else files
    found = [f"{path.relative_to(ROOT)} is {'missing' if not path.exists() else 'out of date'}"
             for path, text in files.items() if not path.exists() or path.read_text() != text]
    if any(path.parent == sample_events.EVENTS_DIR for path in files):
        found += [f"{path.relative_to(ROOT)} is written by nothing any more" for path in sample_events.obsolete(files)]
    return found


def write(files: dict[Path, str]) -> list[Path]:
    changed = []
    for path, text in files.items():
        if not path.exists() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            changed.append(path)
    if any(path.parent == sample_events.EVENTS_DIR for path in files):
        for path in sample_events.obsolete(files):
            path.unlink()
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description="Regenerate every derived file.")
    parser.add_argument("target", nargs="?", choices=TARGETS, help="only these files (default: all)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when any file is stale")
    args = parser.parse_args(argv)
    files = derived_files((args.target,) if args.target else TARGETS)
    if args.check:
        problems = stale(files)
        invalid = openapi.problems(json.loads(files[openapi.DOCUMENT])) if openapi.DOCUMENT in files else []
        problems += [f"{openapi.DOCUMENT.relative_to(ROOT)} is not valid OpenAPI 3.1: {p}" for p in invalid]
        for problem in problems:
            print(problem)
        if problems:
            print(f"run {COMMAND} and commit the result")
            return 1
        print(f"{len(files)} derived files are up to date")
        return 0
    changed = write(files)
    for path in changed:
        print(f"wrote {path.relative_to(ROOT)}" if path.exists() else f"removed {path.relative_to(ROOT)}")
    print(f"{len(changed)} of {len(files)} derived files changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
