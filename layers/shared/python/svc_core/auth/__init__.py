"""Access: who calls and what they may do. Credentials (API keys, service JWTs, turning a request's
Authorization into a Principal), signing keys, the tenant context handed to the domain, the scope
catalogue and each role's scopes, rate limits, the caps on open streams, and the tenant policy
(status, IP allowlist).

May import: platform, contracts (which every layer applies alike: the cells, for routing), adapters, data.
"""
