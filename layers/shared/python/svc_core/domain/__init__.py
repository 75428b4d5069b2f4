"""Domain logic: the service's rules as plain Python over a tenant context and data-access modules
(no AWS client here), with the events it emits (events), its prices (metering), the agents' tool
catalogue (agent_tools), its request and response models beside the rules that use them
(models/: the OpenAPI document is generated from those), and each area's fields (fields/: limits,
patterns, allowed values, help texts), which the rules and the models both import.

May import: platform, contracts, adapters, data, auth.
"""
