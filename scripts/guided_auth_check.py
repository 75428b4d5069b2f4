"""The SAM CLI's own guided-deploy authorization check, run on template.yaml without prompting.

`sam deploy --guided` calls samcli.commands.deploy.auth_utils.auth_per_resource on the template's
stacks and asks "<function> has no authentication. Is this okay?" for every (function, event) it
reports as False; a bare Enter answers no and aborts. This script makes the same call and prints
the list as JSON ([[function, has_auth], ...]), then runs the guided flow's own prompt step
(GuidedContext.prompt_authorization) answering every question with Enter, as a user taking the
defaults would; it exits 1 when any entry would prompt or the step aborts.

Run it with the SAM CLI's Python (its venv, see scripts/sam_checks.sh):
    .venv-sam/bin/python scripts/guided_auth_check.py [template.yaml]
"""

import json
import os
import sys
from types import SimpleNamespace

from click.testing import CliRunner
from samcli.commands.deploy.auth_utils import auth_per_resource
from samcli.commands.deploy.exceptions import GuidedDeployFailedError
from samcli.commands.deploy.guided_context import GuidedContext
from samcli.lib.intrinsic_resolver.intrinsics_symbol_table import IntrinsicsSymbolTable
from samcli.lib.providers.sam_stack_provider import SamLocalStackProvider


def main() -> int:
    template = sys.argv[1] if len(sys.argv) > 1 else "template.yaml"
    region = os.environ.get("AWS_DEFAULT_REGION", "us-east-1")
    stacks, _ = SamLocalStackProvider.get_stacks(
        template, parameter_overrides={}, global_parameter_overrides={IntrinsicsSymbolTable.AWS_REGION: region})
    results = auth_per_resource(stacks)
    print(json.dumps(results))
    with CliRunner().isolation(input="\n" * (len(results) + 1)) as (out, _err):
        try:
            GuidedContext.prompt_authorization(SimpleNamespace(start_bold="", end_bold=""), stacks)
            aborted = None
        except GuidedDeployFailedError as exc:
            aborted = str(exc)
        asked = out.getvalue().decode().count("Is this okay?")
    print(json.dumps({"prompts": asked, "aborted": aborted}))
    return 0 if results and all(required for _, required in results) and not asked and not aborted else 1


if __name__ == "__main__":
    sys.exit(main())
