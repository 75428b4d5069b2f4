"""Password resets' limits and patterns, shared by the rules (domain/password_reset.py) and the models."""

PREFIX = "prt"
LINK_MINUTES = 30
# The e-mailed link's token: the reset's id (a ULID's first digit is 0 to 7) and 32 random bytes
# (base64url); in a deployment of several cells, then the region of the account's cell (as a refresh
# token names it). A group, so that it reads as what it is, a token, never as an id pattern.
TOKEN_PATTERN = r"(?:prt_[0-7][0-9A-HJKMNP-TV-Z]{25}\.[A-Za-z0-9_-]{43}(?:\.[a-z]{2}(?:-[a-z]+)+-[0-9]+)?)"
