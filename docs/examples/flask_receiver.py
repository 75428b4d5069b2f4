"""A complete webhook receiver for the svc service, in Flask.

It verifies each delivery (Standard Webhooks signature and timestamp, with the client library's
verify_webhook), handles each event once however often it arrives (retries, redeliveries and
replays carry the same webhook-id), copes with events out of order, and answers fast.

    pip install flask svc-client
    SVC_WEBHOOK_SECRET=whsec_... flask --app flask_receiver run --port 4242
    # then register http(s)://<your host>/webhook, or forward to it locally:
    svc listen --forward-to http://localhost:4242/webhook     # and use the secret it prints

It keeps a copy of the tenant's projects in SQLite, as an example of "handling" an event.
"""

from __future__ import annotations

import os
import sqlite3
import threading

from flask import Flask, request

from svc_client import ProjectEvent, WebhookVerificationError, verify_webhook

SCHEMA = """
CREATE TABLE IF NOT EXISTS processed (webhook_id TEXT PRIMARY KEY, type TEXT NOT NULL, received_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS projects (id TEXT PRIMARY KEY, name TEXT, updated_at TEXT NOT NULL, deleted INTEGER NOT NULL);
"""


def create_app(secret: str | None = None, database: str | None = None) -> Flask:
    app = Flask(__name__)
    secret = secret or os.environ["SVC_WEBHOOK_SECRET"]
    db = sqlite3.connect(database or os.environ.get("RECEIVER_DB", "receiver.sqlite3"), check_same_thread=False,
                         isolation_level=None)
    db.executescript(SCHEMA)
    lock = threading.Lock()   # one writer at a time on this connection

    @app.post("/webhook")
    def receive():
        body = request.get_data()   # the raw bytes as received: the signature covers exactly them
        try:
            event = verify_webhook(body, request.headers, secret)
        except WebhookVerificationError:
            return {"error": "invalid signature or timestamp"}, 400   # not from the service: nothing done
        with lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                # The webhook-id (= event.id) once: the mark and the work commit together, so a retry
                # after a crash does the work, and a second copy does nothing.
                db.execute("INSERT INTO processed VALUES (?, ?, datetime('now'))", (event.id, event.type))
            except sqlite3.IntegrityError:
                db.execute("ROLLBACK")
                return {"duplicate": event.id}, 200   # handled before: answer 2xx so it is not retried
            try:
                handle(db, event)
                db.execute("COMMIT")
            except Exception:
                db.execute("ROLLBACK")
                raise   # a 500: the service retries it later
        return {"received": event.id}, 200

    return app


def handle(db: sqlite3.Connection, event) -> None:
    """Apply one event. Events can arrive out of order (retries, replays, parallel deliveries): a
    project's row is only replaced by a newer state (its updated_at), and a deletion wins."""
    if not isinstance(event, ProjectEvent):
        return   # other types: nothing to keep here
    project, deleted = event.data, int(event.type == "project.deleted")
    db.execute(
        "INSERT INTO projects VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name, "
        "updated_at = excluded.updated_at, deleted = max(projects.deleted, excluded.deleted) "
        "WHERE excluded.updated_at > projects.updated_at OR excluded.deleted > projects.deleted",
        (project.id, project.name, project.updated_at or project.created_at, deleted))
