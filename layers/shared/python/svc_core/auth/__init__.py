"""Credentials: API keys, service JWTs, and turning a request's Authorization into a Principal."""
