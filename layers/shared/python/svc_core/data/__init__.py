"""Data access: one module per DynamoDB table or SQS queue (common: the shared conditions and
transactions; cell_tables: any table and the bucket of this cell or another, whole items as stored,
for a move between cells). Only this package speaks to the tables and queues; it returns plain items.

May import: platform, contracts, adapters.
"""
