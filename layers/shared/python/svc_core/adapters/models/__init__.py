"""Model providers behind one small interface in Amazon Bedrock Converse shapes.

base.py      the interface, the shapes, and the assembly of a stream into a result
bedrock.py   Amazon Bedrock's Converse API (the cloud)
openai.py    Chat Completions as OpenAI-compatible servers speak it (OpenAI, Azure, Ollama, vLLM, ...)
anthropic.py Anthropic's Messages API
http_api.py  their HTTP side: one time budget per call, retries inside it, errors mapped, SSE
offline.py   a deterministic local model that says it is one (the local stack)
scripted.py  given answers in order (tests that drive tool loops)
registry.py  the provider a deployment (and a tenant, within the allowed list) uses
"""

from svc_core.adapters.models.base import (
                                           ConverseRequest,
                                           ConverseResult,
                                           ModelProvider,
                                           StreamAssembler,
                                           StreamEvent,
                                           Usage,
                                           assemble,
)

__all__ = ["ConverseRequest", "ConverseResult", "ModelProvider", "StreamAssembler", "StreamEvent", "Usage",
           "assemble"]
