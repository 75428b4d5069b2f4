"""The `svc` commands, one module per area of the API; svc_client.cli hangs them from the root."""
