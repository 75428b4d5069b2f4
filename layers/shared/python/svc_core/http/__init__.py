"""HTTP: the machinery every API function shares (api.Api): admission (credential, rate limit,
tenant policy, scope, body rules in json_body), the envelope, the mapping of errors to answers,
CORS, Idempotency-Key, and the pages the service serves itself. It knows no service rule: a route
calls the domain.

May import: platform, contracts, adapters, data, auth.
"""
