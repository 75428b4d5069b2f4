"""Each area's fields: their limits, patterns, allowed values, defaults and help texts, in one place
per area, without pydantic. The rules (svc_core/domain/<area>.py) and the request and response
models (svc_core/domain/models/<area>.py) both import them, so that imports point one way: a rules
module imports its models (to name a body's type), the models import the fields, and nothing
imports back (tests/unit/test_layer_imports.py finds any circle).
"""
