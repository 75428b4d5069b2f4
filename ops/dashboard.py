"""Upload a dashboard build to a deployed stack (template.yaml's DashboardBucket, served by its
DashboardDistribution):

    python -m ops.dashboard --stack NAME [--region R]

Builds dashboard/dist when its sources changed (devstack/dashboard.py), writes `config.json` naming the
stack's API (its ApiUrl output) and its brand (its Brand* parameters), uploads every file with its type
and caching (the hashed assets cached for a year; index.html asked again each time; config.json never
cached), then invalidates index.html and config.json at CloudFront. Earlier assets are left in place:
a page opened before the upload still loads the files it names.
"""

from __future__ import annotations

import argparse
import json
import mimetypes
import sys
from pathlib import Path
from typing import Any

IMMUTABLE = "public, max-age=31536000, immutable"


def cache_control(key: str) -> str:
    if key == "config.json":
        return "no-store"
    return IMMUTABLE if key.startswith("assets/") else "no-cache"


BRAND_PARAMETERS = {"BrandName": "name", "BrandLogo": "logo", "BrandFavicon": "favicon", "BrandColor": "color"}


def brand_of(stack: dict[str, Any]) -> dict[str, str]:
    """config.json's brand from the stack's Brand* parameters (the template's defaults for a stack
    deployed before they existed)."""
    from devstack.dashboard import brand_config
    given = {p["ParameterKey"]: p.get("ParameterValue") for p in stack.get("Parameters") or []}
    return brand_config(**{key: given[name] for name, key in BRAND_PARAMETERS.items() if given.get(name)})


def upload(s3: Any, bucket: str, dist: Path, api_base_url: str, brand: dict[str, str] | None = None) -> list[str]:
    """Every file of the build, and config.json, into the bucket; the keys written, index.html last
    (so it never names an asset not yet there)."""
    files = sorted((p for p in dist.rglob("*") if p.is_file() and not p.name.startswith(".")),
                   key=lambda p: p.name == "index.html")
    written = []
    for path in files:
        key = path.relative_to(dist).as_posix()
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        s3.put_object(Bucket=bucket, Key=key, Body=path.read_bytes(), ContentType=kind, CacheControl=cache_control(key))
        written.append(key)
    config = json.dumps({"apiBaseUrl": api_base_url.rstrip("/"), **({"brand": brand} if brand else {})}).encode()
    s3.put_object(Bucket=bucket, Key="config.json", Body=config, ContentType="application/json",
                  CacheControl=cache_control("config.json"))
    return [*written, "config.json"]


def invalidate(cloudfront: Any, distribution_id: str, reference: str) -> str:
    """Drop CloudFront's copies of the files that name the others (the assets' names change instead)."""
    answer = cloudfront.create_invalidation(DistributionId=distribution_id, InvalidationBatch={
        "Paths": {"Quantity": 3, "Items": ["/", "/index.html", "/config.json"]}, "CallerReference": reference})
    return answer["Invalidation"]["Id"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ops.dashboard", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True, help="the deployed stack's CloudFormation name")
    parser.add_argument("--region", default=None, help="its region (default: your profile's)")
    args = parser.parse_args(argv)
    import time

    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    from devstack import dashboard

    try:
        [stack] = boto3.client("cloudformation", region_name=args.region).describe_stacks(
            StackName=args.stack)["Stacks"]
    except (ClientError, BotoCoreError) as exc:
        print(f"cannot read the stack {args.stack}: {exc}", file=sys.stderr)
        return 1
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs") or []}
    missing = [name for name in ("ApiUrl", "DashboardBucket", "DashboardDistributionId", "DashboardUrl")
               if name not in outputs]
    if missing:
        print(f"the stack {args.stack} has no {', '.join(missing)} output: deploy it with DashboardHosting=Enabled",
              file=sys.stderr)
        return 1
    dist = dashboard.build()
    written = upload(boto3.client("s3", region_name=args.region), outputs["DashboardBucket"], dist, outputs["ApiUrl"],
                     brand_of(stack))
    invalidation = invalidate(boto3.client("cloudfront"), outputs["DashboardDistributionId"], f"deploy-{time.time_ns()}")
    print(f"{len(written)} files uploaded; CloudFront invalidation {invalidation}")
    print(f"dashboard: {outputs['DashboardUrl']}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
