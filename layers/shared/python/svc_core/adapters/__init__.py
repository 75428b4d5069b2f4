"""Adapters: the edges to systems outside the service's own tables, each behind a small interface
that the domain calls. AWS clients (aws, dynamo's value codec), KMS envelope sealing, Secrets
Manager (secrets_cache), project files (the platform's bucket and a tenant's own storage: S3, R2,
GCS, Azure), the storage probe, payments (Stripe, test mode), model providers (Bedrock, offline),
and outbound HTTP to a tenant's endpoints (endpoint_guard: SSRF rules; webhook_url, webhook_http).
An adapter knows no service rule: which tenant's storage, key or price applies is the domain's.

May import: platform.
"""
