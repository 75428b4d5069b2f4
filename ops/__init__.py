"""Operator commands: what the service's operators do that no tenant's API call may."""
