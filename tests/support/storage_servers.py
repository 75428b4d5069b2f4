"""Real storage servers on loopback for the BYOS validation tests.

- AuthS3: moto's S3 server in a child process with request authentication on
  (INITIAL_NO_AUTH_ACTION_COUNT, read when moto starts): the first three requests create an IAM
  user with an allow-everything policy and its access key; from then on every request must be
  signed by a known key, so a wrong secret is SignatureDoesNotMatch, an unknown key
  InvalidAccessKeyId, and a user without a policy AccessDenied, as on AWS. (The session's emulator
  accepts any credentials, so it cannot show bad_credentials.)
- Azurite: Microsoft's Azure Storage emulator (npm package `azurite`), blob service only, in
  memory, with an account whose key is made at run time (AZURITE_ACCOUNTS).
- SilentServer: a listening socket that accepts and never answers (a read timeout).

Each runs once per test module; all are ended when the module's tests end.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from devstack.processes import ChildExited, start_listening_child

ROOT = Path(__file__).resolve().parents[2]
AZURITE = ROOT / "node_modules" / ".bin" / "azurite-blob"


class Unavailable(Exception):
    pass


@dataclass
class Keys:
    access_key: str
    secret_key: str


def _stop(process: subprocess.Popen | None, grace: float = 10) -> None:
    if process and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _start(argv_for, what: str, **popen) -> tuple[subprocess.Popen, int]:
    """The server on a loopback port it listens on itself (devstack.processes.start_listening_child)."""
    try:
        return start_listening_child(argv_for, what, **popen)
    except (ChildExited, TimeoutError) as exc:
        raise Unavailable(str(exc)) from None


class AuthS3:
    def __init__(self) -> None:
        self.port = 0  # its own once started
        self.endpoint = ""
        self.process: subprocess.Popen | None = None
        self.admin: Keys | None = None
        self.nobody: Keys | None = None  # a user with no policy: valid keys, no permission
        self._admin_s3 = None
        self._session = None

    def start(self) -> AuthS3:
        env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "3"}
        self.process, self.port = _start(
            lambda port: [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            "moto's server", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.endpoint = f"http://127.0.0.1:{self.port}"
        iam = self._client("iam", Keys("bootstrap", "bootstrap"))
        iam.create_user(UserName="admin")  # the three unauthenticated requests
        iam.put_user_policy(UserName="admin", PolicyName="everything", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        made = iam.create_access_key(UserName="admin")["AccessKey"]
        self.admin = Keys(made["AccessKeyId"], made["SecretAccessKey"])
        admin_iam = self._client("iam", self.admin)
        admin_iam.create_user(UserName="nobody")
        made = admin_iam.create_access_key(UserName="nobody")["AccessKey"]
        self.nobody = Keys(made["AccessKeyId"], made["SecretAccessKey"])
        return self

    def _client(self, service: str, keys: Keys):
        from botocore.config import Config
        if self._session is None:
            import botocore.session
            self._session = botocore.session.get_session()
        return self._session.create_client(
            service, region_name="us-east-1", endpoint_url=self.endpoint, aws_access_key_id=keys.access_key,
            aws_secret_access_key=keys.secret_key,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))

    def s3(self):
        if self._admin_s3 is None:
            self._admin_s3 = self._client("s3", self.admin)
        return self._admin_s3

    def new_bucket(self) -> str:
        name = f"byos-{secrets.token_hex(6)}"
        self.s3().create_bucket(Bucket=name)
        return name

    def keys_in(self, bucket: str) -> list[str]:
        return [o["Key"] for o in self.s3().list_objects_v2(Bucket=bucket).get("Contents", [])]

    def stop(self) -> None:
        _stop(self.process)


class Azurite:
    def __init__(self) -> None:
        self.port = 0  # its own once started
        self.account = f"acct{secrets.token_hex(4)}"
        self.key = base64.b64encode(secrets.token_bytes(64)).decode()  # made here: nothing secret-shaped committed
        self.endpoint = ""
        self.process: subprocess.Popen | None = None

    def start(self) -> Azurite:
        if not AZURITE.exists() or shutil.which("node") is None:
            raise Unavailable(f"{AZURITE} or node is missing (run scripts/bootstrap_node.sh)")
        env = {**os.environ, "AZURITE_ACCOUNTS": f"{self.account}:{self.key}"}
        self.process, self.port = _start(
            lambda port: [str(AZURITE), "--silent", "--inMemoryPersistence", "--skipApiVersionCheck",
                          "--disableProductStyleUrl", "--blobHost", "127.0.0.1", "--blobPort", str(port)],
            "Azurite", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=str(ROOT))
        self.endpoint = f"http://127.0.0.1:{self.port}/{self.account}"
        return self

    def container_client(self, name: str):
        from azure.storage.blob import BlobServiceClient
        service = BlobServiceClient(account_url=self.endpoint,
                                    credential={"account_name": self.account, "account_key": self.key})
        return service.get_container_client(name)

    def new_container(self) -> str:
        name = f"byos-{secrets.token_hex(6)}"
        self.container_client(name).create_container()
        return name

    def blobs_in(self, container: str) -> list[str]:
        return [b.name for b in self.container_client(container).list_blobs()]

    def stop(self) -> None:
        _stop(self.process, grace=0.5)  # in memory: nothing to keep; SIGTERM waits ~10 s for idle clients


class SilentServer:
    """Accepts connections and never answers."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.port = self.socket.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.held: list[socket.socket] = []
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self.socket.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self.socket.accept()
                self.held.append(conn)
            except OSError:
                continue

    def stop(self) -> None:
        self._stop.set()
        for conn in self.held:
            conn.close()
        self.socket.close()


_held_closed: list[socket.socket] = []


def closed_port_endpoint() -> str:
    """A loopback address where nothing listens (connection refused): a port bound here and never
    listened on, held until the tests end, so no other server can take it meanwhile."""
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    _held_closed.append(held)
    return f"http://127.0.0.1:{held.getsockname()[1]}"
