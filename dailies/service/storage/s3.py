"""Result files in S3-compatible object storage (AWS S3, Volcengine TOS, MinIO, SeaweedFS), through
boto3 with the standard AWS settings: AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_REGION or AWS_DEFAULT_REGION (or a profile, or an instance role).

Result URLs are SigV4 presigned GET URLs signed *at the moment of success* for 24 hours, so a
result's URL is a pure function of its key and its success time, as the local storage's HMAC URLs
are: every API node hands out the same URL for it, a URL seen before can be checked by computing it
again (`recognise`), and it dies 24 hours after success whoever signed it and whenever. botocore's
presigner signs at the current time only; `_SignedAt` is its S3 query signer with the time given.
"""

from __future__ import annotations

import calendar
import contextlib
import hmac
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote

import boto3
import botocore
from botocore.auth import SIGV4_TIMESTAMP, S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.exceptions import ClientError

from dailies.config import current
from dailies.service.storage.results import MEDIA_TYPES, RESULT_NAMES, StoredResult, safe_part

# S3 accepts at most 1000 keys per DeleteObjects call.
_DELETE_BATCH = 1000
# What the probe writes (beside the task folders, which are named cgt-...).
PROBE_NAME = ".probe"


class _SignedAt(S3SigV4QueryAuth):
    """botocore's presigned-URL signer (S3 SigV4, query string), at a given time instead of now."""

    def __init__(self, credentials, region: str, expires: int, signed_at: int) -> None:
        super().__init__(credentials, "s3", region, expires=expires)
        self._signed_at = datetime.fromtimestamp(signed_at, UTC)

    def add_auth(self, request: AWSRequest) -> None:
        # SigV4Auth.add_auth, with the timestamp ours.
        request.context["timestamp"] = self._signed_at.strftime(SIGV4_TIMESTAMP)
        self._modify_request_before_signing(request)
        string_to_sign = self.string_to_sign(request, self.canonical_request(request))
        self._inject_signature_to_request(request, self.signature(string_to_sign, request))


class S3Storage:
    def __init__(self, bucket: str, prefix: str = "", session: boto3.session.Session | None = None) -> None:
        if not bucket:
            raise ValueError("storage s3://BUCKET/prefix: the bucket is missing")
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        session = session or boto3.session.Session(region_name=current().aws_region or None)
        # Path-style or virtual-hosted addressing, endpoint and region follow the AWS settings;
        # s3v4 because older signatures are refused by most providers (and presign differently).
        # A short connect timeout: a bucket that does not answer is noticed (and waited for,
        # workers.py) in seconds rather than after a minute per attempt.
        config = Config(signature_version="s3v4", connect_timeout=5, read_timeout=60,
                        retries={"mode": "standard", "max_attempts": 5})
        self.client = session.client("s3", config=config)
        self.region = self.client.meta.region_name or "us-east-1"
        self._session = session
        # The URL of an object, minus its key, as botocore addresses it (computed once: resolving
        # the endpoint per URL would cost more than signing it).
        unsigned = session.client("s3", config=Config(signature_version=botocore.UNSIGNED))
        probe = unsigned.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"})
        self.object_url_base = probe.split("?", 1)[0].removesuffix("k")
        self._presign = lru_cache(maxsize=8192)(self._presign_uncached)
        # For probes only: a bucket that is down must be reported in seconds, and the transfer
        # client's retries with backoff would take most of a minute to give up.
        self._probe_client = session.client("s3", config=Config(
            signature_version="s3v4", connect_timeout=2, read_timeout=3,
            retries={"mode": "standard", "max_attempts": 1}))

    @classmethod
    def from_url(cls, url: str) -> S3Storage:
        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        return cls(bucket, prefix)

    def check(self) -> None:
        """Fail early, with the reason, when the bucket cannot be reached with these settings."""
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except ClientError as exc:
            raise RuntimeError(f"storage s3://{self.bucket}: {exc}") from exc

    def probe(self) -> None:
        # A bucket that answers can still refuse every file (a policy or key turned read-only, a
        # disabled KMS key, a quota): as LocalStorage does, write one. Only the write is the test;
        # its removal is tidiness, so a bucket that refuses deletes still takes results.
        key = f"{self.prefix}{PROBE_NAME}"
        self._probe_client.put_object(Bucket=self.bucket, Key=key, Body=b"ok")
        with contextlib.suppress(ClientError):
            self._probe_client.delete_object(Bucket=self.bucket, Key=key)

    def key(self, task_id: str, name: str) -> str:
        if not (safe_part(task_id) and safe_part(name)):
            raise ValueError(f"not a result file name: {task_id}/{name}")
        return f"{self.prefix}{task_id}/{name}"

    # ---------- writing ----------

    def put(self, task_id: str, name: str, source: Path) -> None:
        extra = {"ContentType": MEDIA_TYPES.get(name, "application/octet-stream")}
        self.client.upload_file(str(source), self.bucket, self.key(task_id, name), ExtraArgs=extra)

    def delete(self, task_ids: Iterable[str], quick: bool = False) -> None:
        # A DELETE's own: a bucket that takes connections and never answers held each for a minute
        # and more (60 s reads, retried), and forty of them every request of the node.
        client = self._probe_client if quick else self.client
        keys = [{"Key": self.key(t, name)} for t in task_ids for name in RESULT_NAMES]
        for start in range(0, len(keys), _DELETE_BATCH):
            client.delete_objects(Bucket=self.bucket,
                                       Delete={"Objects": keys[start:start + _DELETE_BATCH], "Quiet": True})

    # ---------- URLs ----------

    def url(self, task_id: str, name: str, valid_from: int, valid_until: int, base_url: str = "") -> str:
        credentials = self._session.get_credentials()
        if credentials is None:
            raise RuntimeError("no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        frozen = credentials.get_frozen_credentials()  # an instance role's rotate
        return self._presign(self.key(task_id, name), int(valid_from), int(valid_until) - int(valid_from), frozen)

    def _presign_uncached(self, key: str, signed_at: int, expires: int, credentials) -> str:
        request = AWSRequest(method="GET", url=self.object_url_base + quote(key, safe="/~"))
        _SignedAt(credentials, self.region, expires, signed_at).add_auth(request)
        return request.url

    def recognise(self, url: str) -> StoredResult | None:
        if not url.startswith(self.object_url_base):
            return None
        path, _, query = url.removeprefix(self.object_url_base).partition("?")
        key = unquote(path)
        task_id, sep, name = key.removeprefix(self.prefix).partition("/")
        if not key.startswith(self.prefix) or not sep or not (safe_part(task_id) and safe_part(name)):
            return None
        params = parse_qs(query)
        try:
            signed_at = calendar.timegm(time.strptime(params["X-Amz-Date"][0], SIGV4_TIMESTAMP))
            expires = int(params["X-Amz-Expires"][0])
            signature = params["X-Amz-Signature"][0]
        except (KeyError, ValueError, IndexError):
            return None
        expected = parse_qs(self.url(task_id, name, signed_at, signed_at + expires).partition("?")[2])
        if not hmac.compare_digest(expected["X-Amz-Signature"][0].encode(), signature.encode("utf-8", "replace")):
            return None
        return StoredResult(task_id, name, signed_at + expires)

    # ---------- reading ----------

    def exists(self, task_id: str, name: str) -> bool:
        try:
            self.client.head_object(Bucket=self.bucket, Key=self.key(task_id, name))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            raise
        return True

    def read_bytes(self, task_id: str, name: str) -> bytes:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self.key(task_id, name))["Body"].read()
        except ClientError as exc:
            raise FileNotFoundError(f"{task_id}/{name}: {exc}") from exc

    def local_path(self, task_id: str, name: str, scratch_dir: Path) -> Path:
        scratch_dir.mkdir(parents=True, exist_ok=True)
        target = scratch_dir / f"stored-{task_id}-{name}"
        try:
            self.client.download_file(self.bucket, self.key(task_id, name), str(target))
        except ClientError as exc:
            raise FileNotFoundError(f"{task_id}/{name}: {exc}") from exc
        return target
