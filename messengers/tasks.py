"""The messengers' Celery tasks, imported for the worker: each lives next to what it runs."""

from messengers.delivery import chat_deliver, chats_deliver
from messengers.turns import update_handle

__all__ = ["chat_deliver", "chats_deliver", "update_handle"]
