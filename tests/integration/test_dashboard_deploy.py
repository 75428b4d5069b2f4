"""Uploading a dashboard build (ops/dashboard.py) to S3 and invalidating CloudFront, on the emulator."""

from __future__ import annotations

import json

import boto3
import pytest

from ops import dashboard


@pytest.fixture
def build(tmp_path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "index-abc123.js").write_text("console.log(1)")
    (tmp_path / "assets" / "index-def456.css").write_text("body{}")
    (tmp_path / "index.html").write_text('<script type="module" src="/assets/index-abc123.js"></script>')
    (tmp_path / ".sources.sha256").write_text("not uploaded")
    return tmp_path


def test_the_build_and_its_config_are_uploaded_with_their_types_and_caching(emulator, build):
    s3 = boto3.client("s3", endpoint_url=emulator.endpoint, region_name="us-east-1")
    s3.create_bucket(Bucket="dashboard-files")
    written = dashboard.upload(s3, "dashboard-files", build, "https://abc.execute-api.us-east-1.amazonaws.com/v1/")

    assert written[-2:] == ["index.html", "config.json"]   # index.html after the assets it names
    assert ".sources.sha256" not in written
    heads = {key: s3.head_object(Bucket="dashboard-files", Key=key) for key in written}
    assert heads["assets/index-abc123.js"]["ContentType"] == "text/javascript"
    assert heads["assets/index-abc123.js"]["CacheControl"] == dashboard.IMMUTABLE
    assert heads["assets/index-def456.css"]["ContentType"] == "text/css"
    assert heads["index.html"]["CacheControl"] == "no-cache"
    assert heads["config.json"]["CacheControl"] == "no-store"
    config = json.loads(s3.get_object(Bucket="dashboard-files", Key="config.json")["Body"].read())
    assert config == {"apiBaseUrl": "https://abc.execute-api.us-east-1.amazonaws.com/v1"}


def test_config_json_carries_the_stacks_brand_parameters(emulator, build):
    s3 = boto3.client("s3", endpoint_url=emulator.endpoint, region_name="us-east-1")
    s3.create_bucket(Bucket="branded-files")
    stack = {"Parameters": [{"ParameterKey": "BrandName", "ParameterValue": "Acme Cloud"},
                            {"ParameterKey": "BrandColor", "ParameterValue": "#c0ffee"},
                            {"ParameterKey": "Stage", "ParameterValue": "prod"}]}
    dashboard.upload(s3, "branded-files", build, "https://api.example.com", dashboard.brand_of(stack))
    config = json.loads(s3.get_object(Bucket="branded-files", Key="config.json")["Body"].read())
    assert config["brand"] == {"name": "Acme Cloud", "color": "#c0ffee", "logo": "brand/logo.svg",
                               "favicon": "brand/favicon.svg"}   # a stack deployed before BrandLogo: its default


def test_index_and_config_are_invalidated_at_cloudfront(emulator):
    cloudfront = boto3.client("cloudfront", endpoint_url=emulator.endpoint, region_name="us-east-1")
    distribution = cloudfront.create_distribution(DistributionConfig={
        "CallerReference": "test", "Comment": "", "Enabled": True,
        "Origins": {"Quantity": 1, "Items": [{"Id": "files", "DomainName": "files.s3.amazonaws.com",
                                              "S3OriginConfig": {"OriginAccessIdentity": ""}}]},
        "DefaultCacheBehavior": {"TargetOriginId": "files", "ViewerProtocolPolicy": "redirect-to-https",
                                 "CachePolicyId": "658327ea-f89d-4fab-a63d-7e88639e58f6"},
    })["Distribution"]["Id"]
    made = dashboard.invalidate(cloudfront, distribution, "deploy-1")
    batch = cloudfront.get_invalidation(DistributionId=distribution, Id=made)["Invalidation"]["InvalidationBatch"]
    assert sorted(batch["Paths"]["Items"]) == ["/", "/config.json", "/index.html"]
