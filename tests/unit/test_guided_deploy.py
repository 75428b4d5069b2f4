"""`sam deploy --guided` asks nothing about authentication: no API event is one it would prompt for.

The guided deploy calls the SAM CLI's samcli.commands.deploy.auth_utils.auth_per_resource and asks
"<function> has no authentication. Is this okay? [y/N]" for each Api/HttpApi event it finds without
Auth; Enter answers no ("Security Constraints Not Satisfied!"). The SAM CLI lives in its own venv
(its pins clash with the project's), so its own function and the guided flow's prompt step
(answered with Enter) are run there when that venv exists (scripts/guided_auth_check.py); the
faithful restatement of its rule below runs everywhere.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from devstack.template import ROOT
from devstack.template import load as template


def _api_has_auth(api: dict) -> bool:
    """auth_utils._auth_id: the referenced API's Auth, or a security section in its definition."""
    if api.get("Type") in ("AWS::ApiGateway::RestApi", "AWS::ApiGatewayV2::Api"):
        return True
    properties = api.get("Properties", {})
    definition = properties.get("DefinitionBody") or {}
    return bool(properties.get("Auth")) or bool(definition.get("security") or definition.get("securityDefinitions"))


def _prompts(tpl: dict) -> list[tuple[str, str]]:
    """The (function, event) pairs the guided deploy would ask about (auth_utils._auth_resource_event)."""
    asked = []
    functions = {n: r for n, r in tpl["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}
    for name, function in functions.items():
        properties = function.get("Properties", {})
        for event_name, event in (properties.get("Events") or {}).items():
            for event_type, identifier in (("Api", "RestApiId"), ("HttpApi", "ApiId")):
                if event.get("Type") != event_type:
                    continue
                event_properties = event.get("Properties", {})
                api_ref = event_properties.get(identifier, {})
                api = tpl["Resources"].get(api_ref.get("Ref", "") if isinstance(api_ref, dict) else api_ref, {})
                if not (event_properties.get("Auth") or (api and _api_has_auth(api))):
                    asked.append((name, event_name))
        if (properties.get("FunctionUrlConfig") or {}).get("AuthType") == "NONE":
            asked.append((name, "FunctionUrl"))
    return asked


def test_no_api_event_triggers_the_guided_authentication_prompt():
    tpl = template()
    api_events = [e for f in tpl["Resources"].values() if f["Type"] == "AWS::Serverless::Function"
                  for e in (f["Properties"].get("Events") or {}).values() if e["Type"] == "Api"]
    assert len(api_events) > 100  # the check looks at the real routes
    assert _prompts(tpl) == []


def test_the_check_would_catch_an_api_without_auth():
    tpl = json.loads(json.dumps(template()))
    del tpl["Resources"]["Api"]["Properties"]["Auth"]
    asked = _prompts(tpl)
    assert ("ProjectsFunction", "ListProjects") in asked and len(asked) > 100


def _sam_python() -> Path | None:
    venv = Path(os.environ.get("SAM_VENV", ROOT / ".venv-sam"))
    python = (venv if venv.is_absolute() else ROOT / venv) / "bin" / "python"
    return python if python.exists() else None


@pytest.mark.skipif(_sam_python() is None, reason="no SAM CLI venv ($SAM_VENV or .venv-sam; scripts/sam_checks.sh makes it)")
def test_the_sam_cli_own_check_finds_every_event_authenticated():
    done = subprocess.run([str(_sam_python()), "scripts/guided_auth_check.py", "template.yaml"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "AWS_DEFAULT_REGION": "us-east-1", "SAM_CLI_TELEMETRY": "0"})
    checked, prompted = map(json.loads, done.stdout.splitlines()[-2:])
    assert len(checked) > 100 and all(required for _, required in checked), done.stdout[:500]
    # The guided flow's own prompt step, every question answered with Enter: nothing asked, no abort.
    assert prompted == {"prompts": 0, "aborted": None}
    assert done.returncode == 0
