"""A fake Web Push service (what fcm.googleapis.com is to Chrome): a real HTTP server on 127.0.0.1
(a free port) that takes POST /push/<token> as RFC 8030 says, checks the VAPID Authorization header
(RFC 8292: `vapid t=<JWT>, k=<public key>`, the JWT signed ES256 with that key, `aud` the origin of
this server, `exp` in the next 24 hours, `sub` mailto: or https:) against the public key the test
expects, and records every request, its raw (encrypted) body and what it answered.

Switches a test flips from its own thread:
- `answer_next(*statuses, token=None)`: the next requests (to that token) answer these statuses in turn
  (201 is the default; 410 Gone, 404, 500, 429...);
- `expect_key(public_key)`: the VAPID key requests must be signed with (a wrong or missing signature
  answers 403 and is recorded with its reason).
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from tests.fakes.local_server import LocalServer


def b64url_decode(value: str) -> bytes:
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


@dataclass
class PushRequest:
    path: str
    token: str
    headers: dict[str, str]  # names in lower case
    body: bytes
    at: float
    status: int = 201
    vapid_error: str = ""  # why the VAPID header was refused ("" when it was good)
    claims: dict[str, Any] = field(default_factory=dict)


class FakePushService(LocalServer):
    def __init__(self) -> None:
        self._answers: deque[tuple[int, str | None]] = deque()
        self.public_key = ""
        self.requests: list[PushRequest] = []
        super().__init__(_handler_for(self))

    def endpoint(self) -> str:
        """A fresh subscription endpoint on this service (one per browser)."""
        return f"{self.url}/push/{secrets.token_urlsafe(12)}"

    def expect_key(self, public_key: str) -> None:
        self.public_key = public_key

    def answer_next(self, *statuses: int, token: str | None = None) -> None:
        with self._lock:
            self._answers.extend((status, token) for status in statuses)

    def to(self, endpoint: str, *, ok: bool | None = None) -> list[PushRequest]:
        token = endpoint.rsplit("/", 1)[-1]
        with self._lock:
            return [r for r in self.requests if r.token == token and (ok is None or (200 <= r.status < 300) == ok)]

    def wait_for(self, count: int = 1, timeout: float = 15.0, *, endpoint: str | None = None,
                 ok: bool | None = None) -> list[PushRequest]:
        token = endpoint.rsplit("/", 1)[-1] if endpoint else None

        def matching() -> list[PushRequest]:
            return [r for r in self.requests if (token is None or r.token == token)
                    and (ok is None or (200 <= r.status < 300) == ok)]

        with self._arrived:
            if self._arrived.wait_for(lambda: len(matching()) >= count, timeout):
                return matching()
            arrived = [f"{r.path} -> {r.status}" for r in self.requests]
        raise AssertionError(f"expected {count} push(es) within {timeout}s; arrived: {arrived or 'none'}")

    # --- answering --------------------------------------------------------------------------------

    def _vapid_check(self, request: PushRequest) -> str:
        """Why the Authorization header is not a valid VAPID one for this service ("" when it is)."""
        header = request.headers.get("authorization", "")
        if not header.startswith("vapid "):
            return "no vapid authorization"
        params = dict(part.strip().split("=", 1) for part in header[len("vapid "):].split(",") if "=" in part)
        token, key = params.get("t", ""), params.get("k", "")
        if not self.public_key or key != self.public_key:
            return "k is not the expected public key"
        try:
            head_b64, claims_b64, signature_b64 = token.split(".")
            head = json.loads(b64url_decode(head_b64))
            claims = json.loads(b64url_decode(claims_b64))
            signature = b64url_decode(signature_b64)
            public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64url_decode(key))
            if head.get("alg") != "ES256" or len(signature) != 64:
                return "not ES256"
            der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
            public.verify(der, f"{head_b64}.{claims_b64}".encode("ascii"), ec.ECDSA(hashes.SHA256()))
        except (ValueError, InvalidSignature):
            return "bad signature"
        request.claims = claims
        if claims.get("aud") != self.url:
            return f"aud {claims.get('aud')!r} is not {self.url}"
        if not time.time() < int(claims.get("exp", 0)) <= time.time() + 24 * 3600:
            return "exp out of range"
        if not str(claims.get("sub", "")).startswith(("mailto:", "https://")):
            return "bad sub"
        return ""

    def _handle(self, request: PushRequest) -> int:
        with self._lock:
            request.vapid_error = self._vapid_check(request)
            status = 403 if request.vapid_error else self._next_status(request.token)
            if not request.vapid_error and (request.headers.get("content-encoding") != "aes128gcm" or not request.body):
                status = 400
            request.status = status
            self.requests.append(request)
            self._arrived.notify_all()
        return status

    def _next_status(self, token: str) -> int:
        for answer in list(self._answers):
            status, only = answer
            if only is None or only == token:
                self._answers.remove(answer)
                return status
        return 201


def _handler_for(fake: FakePushService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.close_connection = True
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            path = urlsplit(self.path).path
            headers = {name.lower(): value for name, value in self.headers.items()}
            request = PushRequest(path, path.rsplit("/", 1)[-1], headers, raw, time.monotonic())
            status = fake._handle(request) if path.startswith("/push/") else 404
            try:
                self.send_response(status)
                self.send_header("content-length", "0")
                self.send_header("connection", "close")
                if status == 201:
                    self.send_header("location", f"{fake.url}/message/{secrets.token_urlsafe(8)}")
                self.end_headers()
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler
