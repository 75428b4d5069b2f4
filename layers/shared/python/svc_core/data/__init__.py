"""Data access: one module per DynamoDB table. Only this package speaks to DynamoDB."""
