"""The clients' timeouts and retries (svc_core.adapters.aws): chosen per service, and within an API request's time."""

from __future__ import annotations

import pytest

from svc_core.adapters import aws

API_FUNCTION_SECONDS = 15      # template.yaml's Globals Timeout, the API functions' (and the outbox publisher's)
BACKOFF_SECONDS = [1, 2, 4, 8]  # standard mode's most before the 2nd, 3rd ... attempt


def worst_case(profile: aws.Profile) -> float:
    attempts = profile.max_attempts
    return attempts * (profile.connect_timeout + profile.read_timeout) + sum(BACKOFF_SECONDS[:attempts - 1])


@pytest.mark.parametrize("service", ["dynamodb", "sqs", "secretsmanager", "kms", "events"])
def test_a_call_that_never_answers_gives_up_inside_an_api_functions_time(service):
    assert worst_case(aws.profile(service)) < API_FUNCTION_SECONDS


def test_clients_are_built_from_their_profile_and_a_given_read_timeout_wins(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    aws.reset_clients()
    try:
        dynamodb = aws.client("dynamodb")
        assert (dynamodb.meta.config.connect_timeout, dynamodb.meta.config.read_timeout) == (1, 2)
        # total_max_attempts counts the first attempt; botocore's max_attempts would count retries only
        assert dynamodb.meta.config.retries == {"mode": "standard", "total_max_attempts": 3}
        # a model's client reads for the call's budget and leaves the retries to the adapter (within it)
        model = aws.model_client("bedrock-runtime", 30.0, "http://127.0.0.1:9")
        assert model.meta.config.read_timeout == 30.0 and model.meta.config.retries["total_max_attempts"] == 1
        assert model.meta.endpoint_url == "http://127.0.0.1:9"
        assert aws.client("dynamodb") is dynamodb  # once per container
        other = aws.client("cloudwatch")
        assert (other.meta.config.connect_timeout, other.meta.config.read_timeout) == (2, 10)
    finally:
        aws.reset_clients()


def test_threads_that_ask_for_a_new_client_at_once_share_one(monkeypatch):
    """The outbox publisher's log writes start at once on a cold container: one client is made, not one each."""
    import threading

    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    aws.reset_clients()
    gate = threading.Barrier(8)
    made: list = []

    def ask() -> None:
        gate.wait(timeout=10)
        made.append(aws.client("dynamodb"))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(made) == 8 and len({id(c) for c in made}) == 1
        assert aws.client("dynamodb") is made[0]
    finally:
        aws.reset_clients()
