"""HTTP: the machinery every API function shares (api.Api): admission (credential, rate limit,
tenant policy, scope, body rules in json_body), the envelope, the mapping of errors to answers,
CORS, Idempotency-Key, where a route's parameters come from (params: Query, Header, Body, the list
cursors), and the HTML pages the service serves itself (html_pages). It knows no service rule: a
route calls the domain.

May import: platform, contracts, adapters, data, auth.
"""
