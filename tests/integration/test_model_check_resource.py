"""The deploy's model check (functions/model_check, Custom::ModelCheck): CloudFormation gets FAILED,
with the models named, for a stack that would offer a model it cannot bill, and SUCCESS otherwise.
The response goes over real HTTP to a loopback server standing in for CloudFormation's URL."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler

import pytest

from devstack.loopback_server import LoopbackHTTPServer
from tests.support.functions import load_function


@pytest.fixture
def cloudformation():
    answers: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self):
            answers.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/response", answers
    server.shutdown()
    server.server_close()


def event(url: str, request_type: str, **properties: str) -> dict:
    return {"RequestType": request_type, "ResponseURL": url, "StackId": "arn:aws:cloudformation:us-east-1:1:stack/s/1",
            "RequestId": "r1", "LogicalResourceId": "ModelCheck",
            "ResourceProperties": {"ServiceToken": "arn", **properties}}


def test_a_deploy_offering_an_unpriced_model_fails_and_says_which(cloudformation):
    url, answers = cloudformation
    handler = load_function("model_check").lambda_handler
    handler(event(url, "Create", ModelProvider="openai", ModelId="gpt-4.1-mini",
                  ModelAllowedIds="anthropic:claude-haiku-4-5,openai:my-finetune", ModelFallbackId=""), None)
    handler(event(url, "Update", ModelProvider="bedrock", ModelId="us.anthropic.claude-haiku-4-5-20251001-v1:0",
                  ModelAllowedIds="", ModelFallbackId="openai:gpt-4.1-mini"), None)
    handler(event(url, "Update", ModelProvider="azure", ModelId="x", ModelAllowedIds="", ModelFallbackId=""), None)
    handler(event(url, "Delete", ModelProvider="openai", ModelId="unpriced", ModelAllowedIds="",
                  ModelFallbackId=""), None)
    assert [a["Status"] for a in answers] == ["FAILED", "SUCCESS", "FAILED", "SUCCESS"]
    assert "openai:my-finetune" in answers[0]["Reason"] and "gpt-4.1-mini" not in answers[0]["Reason"]
    assert "MODEL_PROVIDER" in answers[2]["Reason"]
    assert {a["PhysicalResourceId"] for a in answers} == {"model-check"}


def test_a_deploy_offering_a_model_under_an_unknown_prefix_fails(cloudformation):
    """Only Bedrock's inference profiles of a priced foundation model take its price: `us.offline`,
    `global.openai:...` and `eu.anthropic:...` have none, and the deploy says which."""
    url, answers = cloudformation
    handler = load_function("model_check").lambda_handler
    for provider, allowed in (("bedrock", "us.offline"), ("bedrock", "global.openai:gpt-4.1-nano"),
                              ("openai", "bedrock:eu.anthropic:claude-haiku-4-5"), ("offline", "us.offline")):
        handler(event(url, "Create", ModelProvider=provider, ModelId="us.anthropic.claude-haiku-4-5-20251001-v1:0"
                      if provider == "bedrock" else "offline" if provider == "offline" else "gpt-4.1-mini",
                      ModelAllowedIds=allowed, ModelFallbackId=""), None)
    handler(event(url, "Create", ModelProvider="bedrock", ModelId="eu.anthropic.claude-haiku-4-5-20251001-v1:0",
                  ModelAllowedIds="global.anthropic.claude-sonnet-4-5-20250929-v1:0", ModelFallbackId=""), None)
    assert [a["Status"] for a in answers] == ["FAILED"] * 4 + ["SUCCESS"]
    for answer, named in zip(answers, ("us.offline", "global.openai:gpt-4.1-nano",
                                       "eu.anthropic:claude-haiku-4-5", "us.offline"), strict=False):
        assert named in answer["Reason"] and "price" in answer["Reason"], answer["Reason"]
