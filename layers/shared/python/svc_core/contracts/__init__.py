"""Rules: the service's catalogues and value rules, pure functions and tables that more than one
layer applies. The plans and what each includes, the region catalogue, list cursors, e-mail
addresses, how a rotation's overlap ends earlier values (API keys, webhook secrets), the base of
request bodies (schemas: no coercion, no unknown fields, text rules) and the parts of the OpenAPI
document a deployment decides. No table, no AWS client.

May import: platform.
"""
