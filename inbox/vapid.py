"""VAPID keys for Web Push (RFC 8292): a P-256 pair in the base64url forms browsers and pywebpush
take. Production sets its own (`manage.py vapid_keys` prints a fresh pair, docs/deploy.md);
`make run` makes one for the demo once and keeps it in the data folder, so a browser that
subscribed stays subscribed across restarts."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Final

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

DEMO_SUBJECT: Final = "mailto:admin@localhost"
ENV_NAMES: Final = ("SPRAVKA_VAPID_PUBLIC_KEY", "SPRAVKA_VAPID_PRIVATE_KEY", "SPRAVKA_VAPID_SUBJECT")


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def keys_generate() -> tuple[str, str]:
    """A fresh pair: (public: the uncompressed point, 65 bytes; private: the scalar, 32 bytes)."""
    private = ec.generate_private_key(ec.SECP256R1())
    public = private.public_key().public_bytes(serialization.Encoding.X962,
                                               serialization.PublicFormat.UncompressedPoint)
    return _b64url(public), _b64url(private.private_numbers().private_value.to_bytes(32, "big"))


def demo_keys(folder: Path) -> dict[str, str]:
    """The demo's keys as environment variables: read from `folder`/vapid.json, made there once
    (readable by this user only)."""
    path = folder / "vapid.json"
    if path.exists():
        stored = json.loads(path.read_text(encoding="utf-8"))
        if all(stored.get(name) for name in ENV_NAMES):
            return {name: str(stored[name]) for name in ENV_NAMES}
    public, private = keys_generate()
    keys = dict(zip(ENV_NAMES, (public, private, DEMO_SUBJECT), strict=True))
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(keys, out, indent=1)
    return keys
