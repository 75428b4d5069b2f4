"""E-mail addresses as the service compares them, and the ones it refuses to register.

Two spellings are one address when their normalised forms are equal: Unicode NFKC (full-width
and other compatibility forms become the plain letters), case-folded (which also folds ß to ss,
beyond lower-casing), trimmed. The form the user typed is kept for display; only the normalised
form names the account (the users table's e-mail claim, the sign-in throttles).

An address whose local part, or one label of whose domain, mixes letters of more than one script
(a Cyrillic "о" among Latin letters: a look-alike of another address) is refused. Latin may go
with Han, Hiragana, Katakana, Hangul and Bopomofo, as Unicode's "highly restrictive" profile
(UTS #39) allows; digits, punctuation and combining marks belong to no script.
"""

from __future__ import annotations

import unicodedata

# The first word of a letter's Unicode name is its script for all but these, which are one group.
_EAST_ASIAN = {"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL", "BOPOMOFO", "IDEOGRAPHIC"}
_ALLOWED_MIXES = ({"LATIN", "EAST ASIAN"},)
_NO_SCRIPT = {"MODIFIER"}  # modifier letters are used across scripts


def normalise(address: str) -> str:
    """The form addresses are compared in: NFKC, case-folded, trimmed."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", address).casefold()).strip()


def scripts(text: str) -> set[str]:
    """The scripts of the letters in text (after NFKC)."""
    found = set()
    for char in unicodedata.normalize("NFKC", text):
        if not unicodedata.category(char).startswith("L"):
            continue
        word = unicodedata.name(char, "UNKNOWN").split(" ")[0]
        if word in _NO_SCRIPT:
            continue
        found.add("EAST ASIAN" if word in _EAST_ASIAN else word)
    return found


def mixes_scripts(address: str) -> bool:
    """Whether the local part, or any label of the domain, has letters of two scripts that do not
    go together."""
    local, _, domain = address.rpartition("@")
    for part in (local, *domain.split(".")):
        found = scripts(part)
        if len(found) > 1 and not any(found <= mix for mix in _ALLOWED_MIXES):
            return True
    return False
