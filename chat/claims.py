"""Who is making the answer to a visitor message right now, across every ASGI process.

A resend, a second tab or a reconnect after a crash may ask for the answer to a message whose
answer is still being made. A claim in Redis (`chat:answering:<message id>`) keeps a second chain
run from starting; it names the process that holds it. Every process that has claimed something
keeps a heartbeat key alive (`chat:alive:<process>`, refreshed every BEAT_SECONDS by a daemon
thread, expiring after ALIVE_SECONDS). A claim whose process has no heartbeat belongs to a process
that died (kill -9, OOM, a lost machine): anyone may take it over at once, instead of waiting for
the claim itself to expire (CHAT_ANSWER_CLAIM_SECONDS, the backstop).

What must stay true:
- Taking a claim is one Lua script (free, ours, or held by a process without a heartbeat), so two
  takers never both win; only the holder releases it.
- The heartbeat is written before the first claim of a process is: a fresh claim never looks dead.
- A live process whose heartbeat thread lags longer than ALIVE_SECONDS (it should not: it only
  sleeps and writes one key) may lose its claim; the unique "one bot reply per message" constraint
  and `_store_reply`'s check under the conversation lock still keep the answer single.
- A Redis that cannot be reached grants the claim (logged): the same constraint and check keep the
  answer single, at worst with the chain run twice; a visitor is never left without an answer
  because the claims were away.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from typing import Any, Final

from django.conf import settings
from redis.exceptions import RedisError

from core import ratelimit

logger = logging.getLogger("spravka.chat")

BEAT_SECONDS: Final = 2.0
ALIVE_SECONDS: Final = 8

_TAKE: Final = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] and redis.call('EXISTS', ARGV[3] .. holder) == 1 then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
"""
_RELEASE: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

_lock = threading.Lock()
_process = ""  # this process's name in claims; a new one after a fork
_process_pid = 0
_beating: threading.Thread | None = None


def _alive_prefix() -> str:
    return f"{ratelimit.key_prefix()}:chat:alive:"


def _key(message_id: int) -> str:
    return f"{ratelimit.key_prefix()}:chat:answering:{message_id}"


def process_name() -> str:
    """This process's name in claims, with its heartbeat running."""
    global _process, _process_pid, _beating
    with _lock:
        if _process_pid != os.getpid():  # first use, or a forked child: a name and a heartbeat of its own
            _process, _process_pid, _beating = uuid.uuid4().hex, os.getpid(), None
        if _beating is None or not _beating.is_alive():
            _beat_once(_process)
            _beating = threading.Thread(target=_beat, args=(_process,), name="chat-claims-heartbeat", daemon=True)
            _beating.start()
        return _process


def _beat_once(name: str) -> None:
    ratelimit.sync_client().set(_alive_prefix() + name, "1", ex=ALIVE_SECONDS)


def _beat(name: str) -> None:
    while True:
        time.sleep(BEAT_SECONDS)
        try:
            _beat_once(name)
        except Exception:  # Redis away for a moment: the next beat tries again
            logger.debug("claims heartbeat not written", exc_info=True)


def claim(message_id: int) -> bool:
    """Take the claim on answering `message_id`: True when it was free, already this process's, or
    held by a process that is gone; False while a live process holds it."""
    try:
        name = process_name()
        client: Any = ratelimit.sync_client()
        taken = client.eval(_TAKE, 1, _key(message_id), name, settings.CHAT_ANSWER_CLAIM_SECONDS, _alive_prefix())
    except RedisError as exc:
        logger.warning("answer claims: Redis unreachable (%s); message %s answered unclaimed", exc, message_id)
        return True
    return bool(taken)


def release(message_id: int) -> None:
    try:
        client: Any = ratelimit.sync_client()
        client.eval(_RELEASE, 1, _key(message_id), process_name())
    except RedisError as exc:  # the claim expires by itself (CHAT_ANSWER_CLAIM_SECONDS)
        logger.warning("answer claims: Redis unreachable (%s); claim on %s left to expire", exc, message_id)
