"""Invitations' limits and patterns, shared by the rules (domain/invitations.py) and the models."""

PREFIX = "ivt"   # not inv_, which invoices use
# The e-mailed link's token: the invitation's id (a ULID's first digit is 0 to 7) and 32 random bytes
# (base64url). A group, so that it reads as what it is, a token, never as an id pattern.
TOKEN_PATTERN = r"(?:ivt_[0-7][0-9A-HJKMNP-TV-Z]{25}\.[A-Za-z0-9_-]{43})"
NEW_PASSWORD_MIN = 12   # as registration asks (models.accounts.Password)
