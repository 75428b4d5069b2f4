"""The region catalogue: where a tenant's data may live, and what each place supports.

One list, read by GET /regions, the preference rules and the routing info. `jurisdiction` is the
legal area whose residency rules a region satisfies; `compliance` the levels it is certified
for (the open list of levels has these three that the service knows the rules of).
"""

from __future__ import annotations

from dataclasses import dataclass

KNOWN_COMPLIANCE = ("standard", "gdpr", "hipaa")


@dataclass(frozen=True)
class Region:
    id: str
    name: str
    jurisdiction: str            # eu, us, uk, ca, apac
    compliance: tuple[str, ...]
    available: bool = True


REGIONS: dict[str, Region] = {r.id: r for r in (
    Region("us-east-1", "US East (N. Virginia)", "us", ("standard", "hipaa")),
    Region("us-west-2", "US West (Oregon)", "us", ("standard", "hipaa")),
    Region("ca-central-1", "Canada (Central)", "ca", ("standard",)),
    Region("eu-central-1", "Europe (Frankfurt)", "eu", ("standard", "gdpr", "hipaa")),
    Region("eu-west-1", "Europe (Ireland)", "eu", ("standard", "gdpr", "hipaa")),
    Region("eu-north-1", "Europe (Stockholm)", "eu", ("standard", "gdpr")),
    Region("eu-west-2", "Europe (London)", "uk", ("standard", "gdpr")),
    Region("ap-southeast-2", "Asia Pacific (Sydney)", "apac", ("standard",)),
    Region("ap-northeast-1", "Asia Pacific (Tokyo)", "apac", ("standard",), available=False),
)}

DEFAULT_REGION = "us-east-1"


def view(region: Region) -> dict[str, object]:
    return {"id": region.id, "name": region.name, "jurisdiction": region.jurisdiction,
            "complianceLevels": list(region.compliance), "available": region.available}
