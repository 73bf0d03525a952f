"""One call to the shop's order endpoint against a real local server: what is read, what is refused."""

from __future__ import annotations

from datetime import date

import pytest
from django.core.exceptions import ValidationError

from knowledge.catalog import numbers, secrets
from knowledge.catalog.endpoint import order_fetch
from knowledge.catalog.models import OrderEndpoint, OrderLookup
from knowledge.catalog.services import order_endpoint_check, order_endpoint_configure

pytestmark = pytest.mark.django_db


def test_it_reads_status_date_and_tracking_link_by_the_owners_pointers(endpoint, shop_api):
    fetched = order_fetch(endpoint=endpoint, number="48213")
    assert fetched.outcome == "found" and fetched.http_status == 200 and fetched.attempts == 1
    order = fetched.order
    assert order is not None
    assert order.status == "Передан в службу доставки"
    assert order.delivery_date == date(2026, 12, 5)
    assert order.tracking_url == "https://track.example/RU48213"
    path, headers = shop_api.hits[-1]
    assert path == "/api/orders/48213" and headers["x-api-key"] == "s3cret-key-123"
    assert headers["accept"] == "application/json"


def test_a_date_that_is_not_iso_is_shown_as_given_and_a_script_link_is_dropped(endpoint):
    order = order_fetch(endpoint=endpoint, number="48214").order
    assert order is not None
    assert order.delivery_date is None and order.date_text == "к выходным"
    assert order.tracking_url == ""


def test_an_unknown_number_is_not_found(endpoint):
    assert order_fetch(endpoint=endpoint, number="99999").outcome == "not_found"


@pytest.mark.parametrize(("number", "reason"), [
    ("html", "HTML"),
    ("garbage", "не JSON"),
    ("48215", "нет статуса"),
    ("48216", "нет статуса"),
    ("huge", "больше"),
    ("down", "ответ 500"),
    ("slow", "таймаут"),
])
def test_an_endpoint_that_misbehaves_is_unavailable_with_a_reason(endpoint, number, reason):
    fetched = order_fetch(endpoint=endpoint, number=number)
    assert fetched.outcome == "unavailable" and fetched.order is None
    assert reason in fetched.reason


def test_a_slow_or_failing_endpoint_gets_one_retry_and_no_more(endpoint, shop_api):
    order_fetch(endpoint=endpoint, number="slow")
    assert shop_api.order_hits().count("/api/orders/slow") == 2
    order_fetch(endpoint=endpoint, number="down")
    assert shop_api.order_hits().count("/api/orders/down") == 2
    order_fetch(endpoint=endpoint, number="html")  # an answer that a retry cannot fix: asked once
    assert shop_api.order_hits().count("/api/orders/html") == 1


def test_one_503_then_an_answer_is_found_on_the_retry(endpoint, shop_api):
    shop_api.fail_first = 1
    fetched = order_fetch(endpoint=endpoint, number="48213")
    assert fetched.outcome == "found" and fetched.attempts == 2


def test_a_redirect_within_the_endpoint_is_followed(endpoint):
    fetched = order_fetch(endpoint=endpoint, number="moved")
    assert fetched.outcome == "found" and fetched.order and fetched.order.status == "Передан в службу доставки"


def test_a_redirect_to_a_private_address_is_not_followed_and_carries_no_secret(
    endpoint, shop_api, trap, settings
):
    settings.CRAWL_ALLOW_PRIVATE = False
    settings.CRAWL_ALLOWED_NETWORKS = ["127.0.0.1/32"]  # the shop's API is trusted; 127.0.0.2 is not
    shop_api.redirect_to = f"{trap.origin}/latest/meta-data/"
    endpoint.url_template = f"{shop_api.origin}/{{number}}"
    fetched = order_fetch(endpoint=endpoint, number="redirect")
    assert fetched.outcome == "unavailable" and "переадресация" in fetched.reason
    assert trap.hits == []


def test_an_endpoint_on_a_private_address_is_refused_before_any_connection(endpoint, trap, settings):
    settings.CRAWL_ALLOW_PRIVATE = False
    settings.CRAWL_ALLOWED_NETWORKS = []
    endpoint.url_template = trap.template
    fetched = order_fetch(endpoint=endpoint, number="48213")
    assert fetched.outcome == "unavailable" and "внутренней сети" in fetched.reason
    assert fetched.attempts == 1 and trap.hits == []


def test_the_number_is_one_url_component_whatever_it_holds(endpoint, shop_api):
    order_fetch(endpoint=endpoint, number="../admin?x=1#")
    assert shop_api.order_hits()[-1] == "/api/orders/..%2Fadmin%3Fx%3D1%23"


def test_secret_headers_are_stored_encrypted_and_only_their_names_in_clear(endpoint):
    row = OrderEndpoint.objects.get(pk=endpoint.pk)
    assert "s3cret-key-123" not in row.headers_token and row.header_names == ["X-Api-Key"]
    assert secrets.unseal(row.headers_token) == {"X-Api-Key": "s3cret-key-123"}


def test_headers_sealed_with_another_key_fail_honestly(endpoint, settings, shop_api):
    settings.ORDER_SECRETS_KEY = "a-new-key"
    fetched = order_fetch(endpoint=endpoint, number="48213")
    assert fetched.outcome == "unavailable" and "ключ изменился" in fetched.reason
    assert shop_api.hits == []


def test_a_reconfiguration_without_headers_keeps_them_and_bad_settings_change_nothing(bot, endpoint):
    order_endpoint_configure(bot=bot, url_template=endpoint.url_template, status_pointer="/state")
    row = OrderEndpoint.objects.get(bot=bot)
    assert row.status_pointer == "/state" and secrets.unseal(row.headers_token) == {"X-Api-Key": "s3cret-key-123"}
    with pytest.raises(ValidationError) as refused:
        order_endpoint_configure(
            bot=bot, url_template="ftp://shop.example/orders", status_pointer="status",
            number_pattern="(", second_factor=True, headers={},
        )
    assert set(refused.value.message_dict) == {"url_template", "status_pointer", "number_pattern", "second_factor"}
    assert "{number}" in refused.value.message_dict["url_template"][0]
    row.refresh_from_db()
    assert row.status_pointer == "/state" and row.header_names == ["X-Api-Key"]


def test_the_check_logs_the_lookup_but_never_the_body(endpoint):
    fetched = order_endpoint_check(endpoint=endpoint, number="48213", who="admin:1")
    assert fetched.outcome == "found"
    row = OrderLookup.objects.get()
    assert (row.number, row.result, row.visitor_id, row.http_status) == ("48213", "found", "admin:1", 200)
    stored = " ".join(str(value) for value in OrderLookup.objects.values().get().values())
    assert "Иван" not in stored and "999" not in stored and "Передан" not in stored


def test_a_5000_character_number_is_never_sent(endpoint, shop_api):
    fetched = order_endpoint_check(endpoint=endpoint, number="7" * 5000, who="cli")
    assert fetched.outcome == "unavailable" and shop_api.hits == []
    assert OrderLookup.objects.get().result == "bad_number"


@pytest.mark.parametrize(("text", "found"), [
    ("где мой заказ 48213?", "48213"),
    ("заказ №48213, когда привезут", "48213"),
    ("заказал 12.11.2026, где он", None),
    ("мой телефон 123-45-67", None),
    ("", None),
])
def test_the_default_pattern_finds_whole_numbers_only(text, found):
    assert numbers.number_in(text) == found


def test_a_pattern_of_the_owner_is_checked_and_bounded_in_time():
    assert numbers.pattern_error(r"[A-Z]{2}-\d{6}") is None
    assert numbers.number_in("статус заказа ab-123456?", r"[A-Z]{2}-\d{6}") == "ab-123456"
    assert numbers.pattern_error("a*") == "шаблон подходит и к пустой строке"
    assert numbers.pattern_error("(") is not None
    for broken in ("[", "a)(b"):  # they compile only inside the whole-token wrapper (found by the command fuzz)
        assert (numbers.pattern_error(broken) or "").startswith("шаблон не читается"), broken
    evil = r"(\d+)+x"
    assert numbers.number_in("1" * 1900, evil) is None  # catastrophic backtracking, cut by the timeout


def test_second_factors():
    assert numbers.factor_in("1234") == "1234"
    assert numbers.factor_in("+7 999 123-45-67") == "4567"
    assert numbers.factor_in("мой e-mail Ivan@Example.ru") == "ivan@example.ru"
    assert numbers.factor_in("не помню") is None
    assert numbers.factor_matches("4567", phone="+7 (999) 123-45-67", email="")
    assert not numbers.factor_matches("4568", phone="+7 (999) 123-45-67", email="")
    assert numbers.factor_matches("ivan@example.ru", phone="", email="Ivan@Example.ru")
    assert not numbers.factor_matches("ivan@example.ru", phone="", email="")


def test_lookups_reuse_one_kept_alive_connection(endpoint, shop_api):
    """The process's client keeps the connection to the shop between lookups: one TCP
    connection for many calls, not a new one (and a new handshake) per visitor's question."""
    for number in ("48213", "48214", "99999", "48213"):
        order_fetch(endpoint=endpoint, number=number)
    assert len(shop_api.order_hits()) == 4
    assert shop_api.connections == 1


def test_a_pooled_connection_does_not_skip_the_address_check_on_the_next_lookup(bot, shop_api, settings):
    """DNS rebinding against the pool: the shop's name first resolves to an allowed address and a
    kept-alive connection is open; then the name resolves to a private one. The next lookup is
    refused before anything is sent (the check runs on every request, pool or not), and once the
    name is back on the allowed address the same open connection serves it."""
    from core.http import SafeClient

    answers = [["127.0.0.1"], ["10.0.0.7"], ["127.0.0.1"]]
    asked: list[str] = []

    def rebinding(host: str, port: int) -> list[str]:
        asked.append(host)
        return answers[min(len(asked), len(answers)) - 1]

    row = order_endpoint_configure(bot=bot, url_template=f"http://shop.test:{shop_api.port}/api/orders/{{number}}",
                                   status_pointer="/status")
    client = SafeClient(resolver=rebinding, allow_private=False, allowed_networks=["127.0.0.1/32"], timeout=0.5)
    try:
        first = order_fetch(endpoint=row, number="48213", client=client)
        assert first.outcome == "found"
        refused = order_fetch(endpoint=row, number="48213", client=client)
        assert refused.outcome == "unavailable" and "10.0.0.7" in refused.reason
        assert refused.attempts == 1  # a refused address is final, never retried
        again = order_fetch(endpoint=row, number="48213", client=client)
        assert again.outcome == "found"
    finally:
        client.close()
    assert asked == ["shop.test"] * 3
    assert shop_api.order_hits() == ["/api/orders/48213"] * 2  # the refused one never reached the shop
    assert shop_api.connections == 1
    assert shop_api.hits[-1][1]["host"] == f"shop.test:{shop_api.port}"


@pytest.mark.django_db(transaction=True)
def test_a_lookup_row_of_its_own_is_stored_and_the_session_keeps_its_commit_rule(bot):
    """Outside any transaction the row is its own, committed without waiting for the WAL flush:
    stored and visible at once, and the setting ends with it (the connection's next commits wait)."""
    from django.db import connection

    from knowledge.catalog.services import order_lookup_record

    assert not connection.in_atomic_block
    row = order_lookup_record(bot=bot, number="48213", result=OrderLookup.Result.FOUND, visitor_id="v-1")
    assert OrderLookup.objects.filter(pk=row.pk, bot=bot, number="48213", result="found").exists()
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"
