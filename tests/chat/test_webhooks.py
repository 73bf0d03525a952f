"""Signed webhooks delivered by a real Celery worker to a real local HTTP server: the signature
checks out over the raw body, a 500 is retried with backoff, a private address is refused, and
every attempt is on the delivery row."""

import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chat import services, webhooks
from chat.models import WebhookDelivery

pytestmark = pytest.mark.django_db(transaction=True)


class Receiver:
    """An owner's endpoint: answers with the next status from `statuses` (then 200) and keeps
    every request it got."""

    def __init__(self, statuses=()):
        self.statuses = list(statuses)
        self.requests: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append((dict(self.headers), body))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/spravka"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, count, timeout=20.0):
        deadline = time.monotonic() + timeout
        while len(self.requests) < count:
            assert time.monotonic() < deadline, f"expected {count} requests, got {len(self.requests)}"
            time.sleep(0.05)
        return self.requests


@pytest.fixture
def receiver():
    made = []

    def make(statuses=()):
        made.append(Receiver(statuses))
        return made[-1]

    yield make
    for item in made:
        item.server.shutdown()


def _wait_status(status, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not WebhookDelivery.objects.filter(status=status).exists():
        assert time.monotonic() < deadline, list(WebhookDelivery.objects.values("status", "attempts", "error"))
        time.sleep(0.05)
    return WebhookDelivery.objects.get(status=status)


def test_a_handoff_reaches_the_owners_url_signed_with_the_bots_secret(shop, receiver, celery_worker_thread):
    endpoint = receiver()
    shop.webhook_url = endpoint.url
    shop.save(update_fields=["webhook_url"])
    conversation = services.conversation_open(bot=shop, visitor_id="v_hook", page_url="https://shop.example/delivery/")
    services.conversation_handoff(conversation=conversation, reason="button")
    [(headers, body)] = endpoint.wait_for(1)
    expected = "sha256=" + hmac.new(shop.webhook_secret.encode(), body, hashlib.sha256).hexdigest()
    assert headers["X-Spravka-Signature"] == expected and headers["X-Spravka-Event"] == "handoff.waiting"
    payload = json.loads(body)
    assert payload["event"] == "handoff.waiting" and payload["bot"] == "demo"
    assert payload["conversation"]["id"] == conversation.pk and payload["conversation"]["state"] == "waiting_operator"
    assert payload["conversation"]["page_url"] == "https://shop.example/delivery/"
    delivery = _wait_status("delivered")
    assert delivery.attempts == 1 and delivery.response_status == 200 and payload["id"] == delivery.pk


def test_a_failing_endpoint_is_retried_with_backoff_until_it_answers(shop, receiver, celery_worker_thread, settings):
    settings.WEBHOOK_RETRY_BASE = 0.2
    endpoint = receiver(statuses=[500, 503])
    shop.webhook_url = endpoint.url
    shop.save(update_fields=["webhook_url"])
    services.conversation_handoff(conversation=services.conversation_open(bot=shop, visitor_id="v_r"), reason="button")
    bodies = [body for _headers, body in endpoint.wait_for(3)]
    assert len(set(bodies)) == 1  # the same delivery, byte for byte, each time
    delivery = _wait_status("delivered")
    assert delivery.attempts == 3 and delivery.response_status == 200 and delivery.error == ""


def test_a_client_error_is_not_retried_and_the_failure_is_recorded(shop, receiver, celery_worker_thread):
    endpoint = receiver(statuses=[404])
    shop.webhook_url = endpoint.url
    shop.save(update_fields=["webhook_url"])
    services.conversation_handoff(conversation=services.conversation_open(bot=shop, visitor_id="v_4"), reason="button")
    delivery = _wait_status("failed")
    assert delivery.attempts == 1 and delivery.response_status == 404 and delivery.error == "ответ 404"
    from django.utils import translation

    with translation.override("en"):
        assert delivery.error_shown == "response 404"  # stored untranslated, read in the reader's language
    with translation.override("ru"):
        assert delivery.error_shown == "ответ 404"
    assert len(endpoint.requests) == 1


def test_a_webhook_into_a_private_network_is_refused_without_sending(shop, receiver, settings):
    settings.CRAWL_ALLOW_PRIVATE = False
    endpoint = receiver()
    shop.webhook_url = endpoint.url
    shop.save(update_fields=["webhook_url"])
    delivery = WebhookDelivery.objects.create(bot=shop, event="lead.created", url=endpoint.url, payload={"x": 1})
    assert webhooks.webhook_attempt(delivery_id=delivery.pk, final=False) is False
    delivery.refresh_from_db()
    assert delivery.status == "failed" and "внутренней сети" in delivery.error and endpoint.requests == []
    from django.utils import translation

    with translation.override("en"):
        assert "is in a private network" in delivery.error_shown


def test_no_url_no_delivery(shop):
    services.conversation_handoff(conversation=services.conversation_open(bot=shop, visitor_id="v_n"), reason="button")
    assert not WebhookDelivery.objects.exists()
