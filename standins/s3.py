"""A real S3-compatible server on loopback for the shared-workspace tests: moto's server mode, in this process.

It can be stopped and started again on the same port keeping every object (moto keeps its state in the process,
not in the server thread), which is how the tests take the bucket away mid-run. ``enforce_auth`` makes it check
signatures and IAM policies, so that wrong keys and missing permissions fail as they do on AWS.

Writes are handled one at a time. moto checks a conditional PUT's ``If-None-Match: *`` and then stores the object
as two steps with no lock between them, so two concurrent PUTs of one new key could both pass the check and both be
told 200, the second overwriting the first. AWS S3 makes that check and the write one atomic step, and LanceDB's
commits rely on it (two writers of one manifest version: exactly one wins); without it a commit can be lost
silently, which is the likeliest cause of the one CI run whose two-process test missed a note it had stored. Reads
stay concurrent, as on a real store.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import urllib.request
from collections.abc import Callable, Iterable
from typing import Any

os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")  # nothing may look for a cloud metadata service

REGION = "us-east-1"
#: Keys moto accepts while auth is not enforced (any pair is accepted then).
OPEN_KEY = ("testing-key-id", "testing-secret")


class LoopbackS3:
    """moto's S3 (and IAM) server on 127.0.0.1. ``close`` it."""

    def __init__(self) -> None:
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server = _Server(port=0)
        self.port = self._server.port
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.running = True
        self._post("/moto-api/reset", b"")  # moto's state is per process: start from an empty one
        self.open_auth()

    def client(self, service: str = "s3", key: tuple[str, str] = OPEN_KEY) -> Any:
        import boto3

        return boto3.client(service, endpoint_url=self.endpoint, aws_access_key_id=key[0],
                            aws_secret_access_key=key[1], region_name=REGION)

    def create_bucket(self, name: str) -> None:
        self.client().create_bucket(Bucket=name)

    def user(self, name: str, actions: list[str], resource: str = "*") -> tuple[str, str]:
        """An IAM user allowed ``actions`` on ``resource``; returns its (key id, secret)."""
        iam = self.client("iam")
        iam.create_user(UserName=name)
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": resource}]}
        iam.put_user_policy(UserName=name, PolicyName=f"{name}-policy", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName=name)["AccessKey"]
        return key["AccessKeyId"], key["SecretAccessKey"]

    def enforce_auth(self) -> None:
        """From now on every request must be signed by an IAM user's key and allowed by its policy."""
        self._post("/moto-api/reset-auth", b"0")

    def open_auth(self) -> None:
        self._post("/moto-api/reset-auth", b"inf")

    def stop(self) -> None:
        """Take the server away (connections are refused); every object stays for ``start``."""
        if self.running:
            self._server.stop()
            self.running = False

    def start(self) -> None:
        if not self.running:
            self._server = _Server(port=self.port)
            self.running = True

    def close(self) -> None:
        self.stop()

    def _post(self, path: str, body: bytes) -> None:
        # A form content type would have the server parse the body as a form and hand moto an empty one.
        request = urllib.request.Request(self.endpoint + path, data=body, method="POST",
                                         headers={"Content-Type": "text/plain"})
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()


WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class _Server:
    """moto's S3 and IAM application behind werkzeug's threaded server on 127.0.0.1, serving from construction."""

    def __init__(self, port: int) -> None:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        app = writes_one_at_a_time(DomainDispatcherApplication(create_backend_app))
        self._server = make_server("127.0.0.1", port, app, threaded=True, request_handler=MotoRequestHandler)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name=f"loopback-s3-{self.port}",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def writes_one_at_a_time(app: WSGIApp) -> WSGIApp:
    """``app`` with every request that changes state (anything but GET and HEAD) handled alone, response and all,
    which makes a conditional PUT's check and write one step as on a real store."""
    lock = threading.Lock()

    def serve(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") in ("GET", "HEAD"):
            return app(environ, start_response)
        with lock:
            return list(app(environ, start_response))

    return serve
