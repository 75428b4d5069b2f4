"""Contracts: what the service promises outside and every layer applies alike, as pure functions
and tables. The plans and what each includes (plans), the region catalogue (regions), the event
envelope and its types (events), list cursors (cursors), e-mail addresses (email_address), how a
rotation's overlap ends earlier values of API keys and webhook secrets (rotation), the parts of
the OpenAPI document a deployment decides (deployment_document), and whose each item of a cell is
(tenant_items: the residency audit's and a move's rules). No table, no AWS client, no HTTP: the
parameter markers are svc_core.http.params, the base of request bodies svc_core.domain.models.request_body.

May import: platform.
"""
