"""Domain logic: plain Python over a tenant context and a data-access module (no boto3 here)."""
