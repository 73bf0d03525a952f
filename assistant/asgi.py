"""ASGI entry point: HTTP through Django, websockets through Channels.

`SERVER_OPTIONS` are the uvicorn settings the widget sockets were measured with
(docs/benchmarks.md, "Widget websockets per uvicorn process"). `make run` passes them to
`uvicorn.run`, docs/deploy.md spells them as command-line flags (`uvicorn_flags()`), and a test
keeps the two in agreement:

- `ws_per_message_deflate=False`: compression keeps a zlib compressor and decompressor per socket
  for the life of the socket, most of an idle session's memory, and widget frames are small JSON;
  the browser's offer to compress is simply declined.
- `ws="websockets-sansio"`: the protocol implementation uvicorn picks by itself today, pinned so
  that installing another one (wsproto) cannot change what was measured.
- `ws_max_size`: uvicorn reads a whole frame before the consumer sees it (16 MB by default). Frames
  up to four times CHAT_MAX_FRAME_BYTES still reach the consumer and get the readable `too_large`
  error; anything bigger is a client that is not the widget and is closed with 1009.

Imported by uvicorn as the process's entry point, it turns on the database connection pool
(`assistant.dbpool`, DB_POOL).

Importing this module runs Django's system checks (`assistant.startup.system_check`): uvicorn runs
no management command, and a misconfigured server must refuse to start rather than fail later.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assistant.settings")
# Nothing configured Django before this module: uvicorn imported it as the process's entry point
# (not a test or a management command that imports the app), so this process serves and takes its
# database connections from the pool (assistant/dbpool.py; `make run` turns it on by itself).
SERVING_PROCESS: bool = not settings.configured
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from assistant.dbpool import pool_serve  # noqa: E402
from assistant.routing import websocket_urlpatterns  # noqa: E402
from assistant.startup import system_check, warm_up  # noqa: E402

system_check()
if SERVING_PROCESS:
    pool_serve()
    warm_up()

SERVER_OPTIONS: dict[str, Any] = {
    "ws": "websockets-sansio",
    "ws_per_message_deflate": False,
    "ws_max_size": 4 * settings.CHAT_MAX_FRAME_BYTES,
}


def uvicorn_flags(options: dict[str, Any] | None = None) -> list[str]:
    """`SERVER_OPTIONS` as uvicorn command-line flags, e.g. `--ws-per-message-deflate false`."""
    flags: list[str] = []
    for name, value in (SERVER_OPTIONS if options is None else options).items():
        flags += [f"--{name.replace('_', '-')}", str(value).lower() if isinstance(value, bool) else str(value)]
    return flags


application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": URLRouter(websocket_urlpatterns),
    }
)
