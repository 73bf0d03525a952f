"""Websocket routes; the widget and operator consumers register here."""

from __future__ import annotations

from django.urls import URLPattern, path

from assistant.chat.consumers import ChatConsumer

websocket_urlpatterns: list[URLPattern] = [
    # The widget key is public (it is in the site's HTML); the consumer checks it and the Origin.
    path("ws/chat/<str:public_key>/", ChatConsumer.as_asgi()),
]
