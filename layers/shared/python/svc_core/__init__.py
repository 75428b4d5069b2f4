"""Shared layer of the service: envelope, errors, auth, scopes, rate limit, events, data access."""
