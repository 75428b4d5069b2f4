"""A SnapStart restore, emulated in-process against the moto server: the clients made before the
snapshot are kept (svc_core/adapters/aws.py), and yet no credential and no connection of the
snapshot's is used after the restore."""

from __future__ import annotations

import urllib3.connection

from svc_core.adapters import aws
from svc_core.platform import snapshot
from svc_core.platform.config import settings


def test_a_kept_client_signs_with_credentials_resolved_after_the_restore_on_a_new_connection(stack, monkeypatch):
    monkeypatch.setattr(snapshot, "registered", {"before": [], "after": []})
    connects = []
    real_connect = urllib3.connection.HTTPConnection.connect
    monkeypatch.setattr(urllib3.connection.HTTPConnection, "connect",
                        lambda conn: connects.append(conn) or real_connect(conn))

    def read() -> None:
        aws.client("dynamodb").get_item(TableName=settings().api_keys_table, Key={"pk": {"S": "KEY#none"}})

    # The init phase, as an Api's before-snapshot hook: the clients warmed, then a real call (as the
    # key pepper's read is), which resolves credentials and opens a connection.
    snapshot.register(lambda: (aws.warm_models(("dynamodb",)), read()), runtime=None)
    snapshot.run_before()
    kept = aws.client("dynamodb")
    assert len(connects) == 1  # the real read's; the warm-up's calls were answered in-process
    assert not aws.credentials().resolved  # the snapshot holds no credential

    signed = []
    kept.meta.events.register("before-send", lambda request, **_: signed.append(request.headers["Authorization"]))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "restored")  # this environment's own credentials
    try:
        snapshot.run_after()
        read()
        assert aws.client("dynamodb") is kept
        assert b"Credential=restored/" in signed[0]
        # The snapshot's pool was closed: this call connects a connection of its own. (The moto
        # server closes each connection after its answer, so a pool reconnects the same object.)
        assert len(connects) == 2 and connects[1] is not connects[0]
        read()
        assert connects[2] is connects[1]  # the control: without a close, the pool's connection is reused
    finally:
        aws.reset_clients()
