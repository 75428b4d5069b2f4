"""A tool call's input that is not a JSON object (a model can write broken arguments): it reaches
the tool as {"_raw": text}, for an answer and for a stream of any provider, and every agent tool
refuses it as invalid input, so the model reads why instead of the turn failing."""

from __future__ import annotations

import pytest

from svc_core.adapters.models.base import assemble, tool_input
from svc_core.domain import agent_tools


@pytest.mark.parametrize("text, expected", [
    ("", {}),
    ("  ", {}),
    ('{"path": "a.txt"}', {"path": "a.txt"}),
    ('{"path": "a.txt"', {"_raw": '{"path": "a.txt"'}),
    ("[1, 2]", {"_raw": "[1, 2]"}),
    ('"a.txt"', {"_raw": '"a.txt"'}),
])
def test_tool_input_keeps_what_is_not_a_json_object_as_raw_text(text, expected):
    assert tool_input(text) == expected


def test_a_stream_with_broken_tool_input_assembles_instead_of_raising():
    events = [{"messageStart": {"role": "assistant"}},
              {"contentBlockStart": {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "x"}}}},
              {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"path": '}}}},
              {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '"a.txt'}}}},
              {"contentBlockStop": {"contentBlockIndex": 0}},
              {"messageStop": {"stopReason": "tool_use"}},
              {"metadata": {"usage": {"inputTokens": 3, "outputTokens": 4}}}]
    result = assemble(events, "m", "bedrock")
    assert result.tool_uses == [{"toolUseId": "t1", "name": "x", "input": {"_raw": '{"path": "a.txt'}}]


@pytest.mark.parametrize("name", sorted(agent_tools.TOOLS))
def test_every_agent_tool_refuses_raw_input(name):
    assert agent_tools.input_errors(name, tool_input('{"path": "a.txt", "content": "cut')) != []
