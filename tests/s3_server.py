"""A local S3 (and DynamoDB) API: moto's server mode, one per test session, on 127.0.0.1.

Tables live at `s3://<bucket>/<path>?endpoint_override=127.0.0.1:<port>&scheme=http&region=us-east-1`, the URI form
`pyarrow.fs.FileSystem.from_uri` takes; Spark tasks reopen storage from that string, hudi-rs gets the same endpoint
as storage options (`oracle._rs_table`). Credentials come from the environment (`AWS_ACCESS_KEY_ID`, ...), set by
`tests/conftest.py` before anything starts a JVM, so Spark's Python workers inherit them too.
"""
from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Any

REGION = "us-east-1"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": REGION,
               "AWS_DEFAULT_REGION": REGION, "AWS_EC2_METADATA_DISABLED": "true"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class S3Server:
    host: str
    port: int
    process: subprocess.Popen

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def endpoint_url(self) -> str:
        return f"http://{self.endpoint}"

    def uri(self, bucket: str, path: str) -> str:
        return f"s3://{bucket}/{path.strip('/')}?endpoint_override={self.endpoint}&scheme=http&region={REGION}"

    def client(self, service: str = "s3") -> Any:
        import boto3

        return boto3.session.Session().client(service, endpoint_url=self.endpoint_url, region_name=REGION)

    def new_bucket(self) -> str:
        name = f"t-{uuid.uuid4().hex[:20]}"
        self.client().create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        out: list[str] = []
        for page in self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            out += [o["Key"] for o in page.get("Contents", [])]
        return out

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def start_server() -> S3Server:
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"moto server exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                raise RuntimeError("moto server did not start within 60 s") from None
            time.sleep(0.1)
    return S3Server("127.0.0.1", port, process)
