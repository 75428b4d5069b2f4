"""bench/cost.py's arithmetic: an invocation's record priced by bench/prices.json, as AWS bills it."""

from __future__ import annotations

import io
import json

import pytest

from bench import cost
from devstack import meter

P = cost.prices()


def test_the_prices_file_names_its_date_region_and_a_source_for_every_price():
    document = cost.price_document()
    assert document["region"] == "us-east-1" and document["version"] >= 1 and document["date"]
    for name, entry in document["prices"].items():
        assert entry["usd"] > 0 and entry["source"].startswith("https://aws.amazon.com/"), name


def test_an_api_invocation_is_priced_by_its_parts():
    record = {"source": "api", "ms": 12.2, "logBytes": 710, "responseBytes": 2048, "calls": [
        {"service": "dynamodb", "operation": "UpdateItem", "overhead": True, "units": [{"table": "t", "total": 1.0}]},
        {"service": "dynamodb", "operation": "GetItem", "overhead": False, "units": [{"table": "t", "total": 0.5}]},
        {"service": "dynamodb", "operation": "TransactWriteItems", "overhead": False,
         "units": [{"table": "t", "total": 4.0}, {"table": "c", "total": 2.0}]},
        {"service": "sqs", "operation": "SendMessage", "chunks": 2},
        {"service": "kms", "operation": "Decrypt"}]}
    bill = cost.price_invocation(record, 512, P, global_tables={})
    assert bill.parts["Lambda"] == pytest.approx(P["lambda.request"] + 0.013 * 0.5 * P["lambda.arm64_gb_second"])
    assert bill.parts["API Gateway"] == pytest.approx(P["apigateway.rest_request"] + 2048 / cost.GB *
                                                      P["apigateway.data_out_gb"])
    assert bill.parts["DynamoDB: auth and rate limits"] == pytest.approx(P["dynamodb.write_request_unit"])
    assert bill.parts["DynamoDB: the route's own"] == pytest.approx(0.5 * P["dynamodb.read_request_unit"]
                                                                    + 6 * P["dynamodb.write_request_unit"])
    assert bill.parts["SQS"] == pytest.approx(2 * P["sqs.request"])
    assert bill.parts["KMS"] == pytest.approx(P["kms.request"])
    assert bill.parts["Logs"] == pytest.approx((710 + cost.PLATFORM_LOG_BYTES) / cost.GB * P["logs.ingested_gb"])
    assert bill.units["WRU"] == 7 and bill.units["RRU"] == 0.5


def test_a_write_to_a_global_table_pays_each_replica_and_a_queue_batch_its_receive_and_delete():
    record = {"source": "aws:sqs", "ms": 1.0, "logBytes": 0, "calls": [
        {"service": "dynamodb", "operation": "PutItem", "overhead": False, "units": [{"table": "dir", "total": 1.0}]}]}
    bill = cost.price_invocation(record, 1024, P, global_tables={"dir": 2})
    assert bill.units["replicated WRU"] == 2
    assert bill.parts["DynamoDB: the route's own"] == pytest.approx(P["dynamodb.write_request_unit"]
                                                                    + 2 * P["dynamodb.replicated_write_request_unit"])
    assert bill.parts["SQS"] == pytest.approx(2 * P["sqs.request"]) and "API Gateway" not in bill.parts


def test_the_floor_keeps_the_routes_own_calls_and_their_time_only():
    record = {"source": "api", "ms": 40.0, "logBytes": 5000, "responseBytes": 0, "calls": [
        {"service": "dynamodb", "operation": "UpdateItem", "overhead": True, "ms": 9.0, "units": [{"total": 1.0}]},
        {"service": "dynamodb", "operation": "GetItem", "overhead": False, "ms": 3.4, "units": [{"total": 0.5}]}]}
    floor = cost.floor_of(record, 1024, P, {})
    assert floor.units["lambda GB-ms"] == 4 and floor.units["WRU"] == 0 and floor.units["RRU"] == 0.5
    assert floor.parts["Logs"] == 0 and floor.total < cost.price_invocation(record, 1024, P, global_tables={}).total


@pytest.mark.parametrize(("service", "operation", "params", "chunks"), [
    ("sqs", "SendMessage", {"MessageBody": "x" * 1000}, 1),
    ("sqs", "SendMessage", {"MessageBody": "x" * (64 * 1024 + 1)}, 2),
    ("sqs", "SendMessageBatch", {"Entries": [{"MessageBody": "x" * 40_000}] * 4}, 3),
    ("events", "PutEvents", {"Entries": [{"Detail": "{}"}, {"Detail": "y" * 70_000}]}, 3),
    ("email", "SendEmail", {"Destination": {"ToAddresses": ["a@x.test"], "CcAddresses": ["b@x.test"]}}, 2),
])
def test_a_request_counts_the_chunks_its_service_bills(service, operation, params, chunks):
    assert meter._chunks(service, operation, params)["chunks"] == chunks


def test_the_stream_counts_what_a_handler_writes_and_the_metrics_it_declares():
    inner = io.StringIO()
    stream = meter._CountingStream(inner)
    record = {"logBytes": 0, "metrics": []}
    emf = json.dumps({"_aws": {"CloudWatchMetrics": [{"Namespace": "svc", "Dimensions": [["service"]],
                                                      "Metrics": [{"Name": "Requests"}, {"Name": "Errors"}]}]},
                      "service": "projects", "Requests": 1, "Errors": 0})
    token = meter._current.set(record)
    try:
        stream.write("héllo\n")
        stream.write(emf + "\n")
    finally:
        meter._current.reset(token)
    stream.write("not counted\n")
    assert record["logBytes"] == len("héllo\n".encode()) + len(emf) + 1
    assert record["metrics"] == ["svc/Requests{service=projects}", "svc/Errors{service=projects}"]
    assert inner.getvalue().endswith("not counted\n")


def test_a_secret_read_is_a_cache_refresh_priced_in_the_month_not_per_call():
    record = {"source": "api", "ms": 1.0, "logBytes": 0, "responseBytes": 0, "calls": [
        {"service": "secretsmanager", "operation": "GetSecretValue", "secret": "arn:signing"}]}
    bill = cost.price_invocation(record, 1024, P, global_tables={})
    assert bill.parts.get("Secrets Manager", 0.0) == 0 and bill.units["Secrets Manager cache refreshes"] == 1
    from devstack.template import Resolver
    run = cost.CostRun([], cost.Bill(), 0, set(), {"MetaFunction/arn:signing", "AuthFunction/arn:signing"}, "", "", "")
    month = cost.idle_month(Resolver({"AllowLoopbackEndpoints": "true", "ModelProvider": "offline"}), run, P)
    [refresh] = [usd for part, usd in month.parts.items() if part.startswith("secret cache refreshes (2 ")]
    assert refresh == pytest.approx(2 * cost.MONTH_SECONDS / cost.SECRETS_CACHE_SECONDS * P["secretsmanager.request"])
