"""Domain logic: the service's rules as plain Python over a tenant context and data-access modules
(no AWS client here), with the events it emits (events), its prices (metering), the agents' tool
catalogue (agent_tools), and its request and response models beside the rules that use them
(the OpenAPI document is generated from those models).

May import: platform, rules, adapters, data, auth.
"""
