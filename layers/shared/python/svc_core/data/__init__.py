"""Data access: one module per DynamoDB table or SQS queue (common: the shared conditions and
transactions). Only this package speaks to the tables and queues; it returns plain items.

May import: platform, contracts, adapters.
"""
