"""Tenants' fields: the IP allowlist's entries (CIDR_PATTERN, the document's pattern and the
validator's) and its length."""

from __future__ import annotations


def _ipv6(hextet: str, ipv4: str) -> str:
    """Every form of an IPv6 address that ipaddress reads (no zone id): eight hextets, or fewer
    around one "::" that stands for at least one, the last two maybe written as an IPv4 address."""
    h = hextet
    plain = [f"(?:{h}:){{7}}{h}", f"::(?:{h}(?::{h}){{0,6}})?"]
    plain += [f"(?:{h}:){{{k}}}:(?:{h}(?::{h}){{0,{6 - k}}})?" for k in range(1, 7)] + [f"(?:{h}:){{7}}:"]
    mixed = [f"(?:{h}:){{6}}{ipv4}", f"::(?:{h}:){{0,5}}{ipv4}"]
    mixed += [f"(?:{h}:){{{k}}}:(?:{h}:){{0,{5 - k}}}{ipv4}" for k in range(1, 6)]
    return "(?:" + "|".join(plain + mixed) + ")"


_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"  # no leading zero: ipaddress refuses them
_IPV4 = f"{_OCTET}(?:\\.{_OCTET}){{3}}"
_IPV6 = _ipv6("[0-9A-Fa-f]{1,4}", _IPV4)
# An IPv4 or IPv6 address, with a prefix length or without (then /32 or /128). Both the document
# and the validator use it; ipaddress then normalises (host bits cleared, IPv6 compressed).
CIDR_PATTERN = (f"^(?:{_IPV4}(?:/(?:3[0-2]|[12]?[0-9]))?|{_IPV6}(?:/(?:12[0-8]|1[01][0-9]|[1-9]?[0-9]))?)$")
MAX_ALLOWLIST = 100
