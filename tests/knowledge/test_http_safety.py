"""SSRF rules of the one outbound client, and its limits. The tests switch CRAWL_ALLOW_PRIVATE off
(the suite turns it on for local sites) and check that a refused address never sees a request.

Cross-cutting: core/http.py's guard as the crawler (knowledge/crawler.py) meets it; it stays here for this
folder's local sites."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

import pytest

from core.http import (
    AddressRefused,
    FetchTimeout,
    SafeClient,
    TooLarge,
    TooManyRedirects,
    Unreachable,
    address_is_public,
)
from knowledge.models import CrawlRun, Page, Source
from tests.knowledge.sites import Resource, Site


@pytest.fixture
def strict(crawl_settings):
    """Production rules: private addresses refused (after crawl_settings, which allows them)."""
    crawl_settings.CRAWL_ALLOW_PRIVATE = False
    crawl_settings.CRAWL_ALLOWED_NETWORKS = []
    return crawl_settings


@pytest.fixture
def trusted_site(strict) -> Iterator[Site]:
    """A site on 127.0.0.2, trusted the way an owner trusts an intranet site; 127.0.0.1 stays refused."""
    strict.CRAWL_ALLOWED_NETWORKS = ["127.0.0.2/32"]
    site = Site(host="127.0.0.2").start()
    try:
        yield site
    finally:
        site.stop()


def resolver_to(*addresses: str):
    calls: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        calls.append(host)
        return list(addresses)

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


@pytest.mark.parametrize("url", ["http://127.0.0.1:{port}/", "http://[::1]:{port}/", "http://169.254.169.254/latest/",
                                 "http://0.0.0.0:{port}/", "http://[::ffff:127.0.0.1]:{port}/", "http://10.0.0.5/"])
def test_ip_literals_in_private_networks_are_refused_without_a_request(strict, shop_site, url):
    with SafeClient() as client, pytest.raises(AddressRefused) as refused:
        client.get(url.format(port=shop_site._server.server_port))

    assert "во внутренней сети" in refused.value.reason
    assert shop_site.hits == []


def test_a_name_that_resolves_to_loopback_is_refused(strict, shop_site):
    with SafeClient() as client, pytest.raises(AddressRefused) as refused:
        client.get(f"http://localhost:{shop_site._server.server_port}/")

    assert "127.0.0.1" in refused.value.reason or "::1" in refused.value.reason
    assert shop_site.hits == []


def test_every_address_of_a_name_is_checked_not_just_the_first(strict):
    resolve = resolver_to("93.184.216.34", "10.0.0.5")

    with SafeClient(resolver=resolve) as client, pytest.raises(AddressRefused) as refused:
        client.get("http://intranet.shop.test/")

    assert "10.0.0.5" in refused.value.reason
    assert resolve.calls == ["intranet.shop.test"]


def test_a_name_that_does_not_resolve_is_unreachable(strict):
    with SafeClient(resolver=resolver_to()) as client, pytest.raises(Unreachable):
        client.get("http://nowhere.shop.test/")


def test_a_redirect_from_an_allowed_host_to_loopback_is_refused(trusted_site, shop_site):
    target = shop_site.url("/admin/")
    trusted_site.routes["/go"] = Resource(status=302, headers={"Location": target})

    with SafeClient() as client, pytest.raises(AddressRefused) as refused:
        client.get(trusted_site.url("/go"))

    assert "127.0.0.1" in refused.value.reason
    assert len(trusted_site.requests_to("/go")) == 1
    assert shop_site.hits == []


def test_the_connection_goes_to_the_checked_address_with_the_real_host_name(crawl_settings, shop_site):
    """The name is resolved once, by us; the socket opens to that address (no second lookup that a
    rebinding DNS could answer differently) and the server still sees its own name."""
    resolve = resolver_to("127.0.0.1")
    shop_site.html("/", "Магазин", "<p>ok</p>")
    port = shop_site._server.server_port

    with SafeClient(resolver=resolve) as client:
        response = client.get(f"http://shop.test:{port}/")

    assert response.status == 200 and response.url == f"http://shop.test:{port}/"
    assert shop_site.requests_to("/")[0].headers["host"] == f"shop.test:{port}"
    assert resolve.calls == ["shop.test"]


def test_proxies_from_the_environment_are_ignored(crawl_settings, shop_site, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9/")
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9/")
    shop_site.html("/", "Магазин", "<p>ok</p>")

    with SafeClient() as client:
        assert client.get(shop_site.url("/")).status == 200


@pytest.mark.parametrize(("address", "public"), [
    ("8.8.8.8", True), ("2a00:1450:4010::65", True),
    ("127.0.0.1", False), ("10.1.2.3", False), ("172.16.0.1", False), ("192.168.1.1", False),
    ("169.254.169.254", False), ("100.64.0.1", False), ("0.0.0.0", False), ("224.0.0.1", False),  # noqa: S104
    ("255.255.255.255", False), ("::1", False), ("::", False), ("fe80::1", False), ("fc00::1", False),
    ("ff02::1", False), ("::ffff:10.0.0.1", False), ("64:ff9b::7f00:1", False), ("2002:7f00:1::", False),
])
def test_address_rules(address, public):
    assert address_is_public(ipaddress.ip_address(address)) is public


def test_a_body_over_the_limit_is_cut_off_while_streaming(crawl_settings, shop_site):
    shop_site.routes["/big"] = Resource(b"x" * 50_000, chunked_size=1000)

    with SafeClient(max_bytes=10_000) as client, pytest.raises(TooLarge) as too_large:
        client.get(shop_site.url("/big"))

    assert too_large.value.reason == "страница больше 9,8 КБ"


def test_a_slow_answer_times_out(crawl_settings, shop_site):
    shop_site.routes["/slow"] = Resource(b"late", delay=1.5)

    with SafeClient(timeout=0.3) as client, pytest.raises(FetchTimeout) as timeout:
        client.get(shop_site.url("/slow"))

    assert timeout.value.reason == "таймаут 0,3 с"


def test_redirects_stop_at_the_limit(crawl_settings, shop_site):
    for n in range(5):
        shop_site.routes[f"/r{n}"] = Resource(status=301, headers={"Location": f"/r{n + 1}"})

    with SafeClient(max_redirects=2) as client, pytest.raises(TooManyRedirects):
        client.get(shop_site.url("/r0"))

    assert shop_site.requests_to("/r3") == []


@pytest.mark.django_db
def test_a_crawl_of_a_private_address_fails_with_a_reason_and_sends_nothing(strict, shop_site, bot):
    from knowledge.crawler import crawl_source

    source = Source.objects.create(bot=bot, kind=Source.Kind.SITE, url=shop_site.url("/"))
    run = crawl_source(run=CrawlRun.objects.create(bot=bot, source=source), embed=False)

    assert run.status == CrawlRun.Status.FAILED
    assert run.message == "Сайт недоступен: адрес 127.0.0.1 во внутренней сети — такие адреса не обходим"
    assert shop_site.hits == []


@pytest.mark.django_db
def test_a_site_whose_dns_turns_private_mid_crawl_is_refused_from_then_on(trusted_site, bot):
    """DNS rebinding: the name answered with an allowed address, then with loopback."""
    from knowledge.crawler import crawl_source

    trusted_site.html("/", "Магазин", "<h1>Магазин</h1><p>Доставка по Москве и области.</p><p>Оплата картой.</p>",
                      links=["/delivery/"])
    trusted_site.html("/delivery/", "Доставка", "<h1>Доставка</h1><p>Курьер на следующий день.</p>")

    def rebinding(host: str, port: int) -> list[str]:
        return ["127.0.0.1"] if trusted_site.requests_to("/") else ["127.0.0.2"]

    port = trusted_site._server.server_port
    source = Source.objects.create(bot=bot, kind=Source.Kind.SITE, url=f"http://shop.test:{port}/")
    run = crawl_source(run=CrawlRun.objects.create(bot=bot, source=source), embed=False, resolver=rebinding)

    delivery = Page.objects.get(source=source, url=f"http://shop.test:{port}/delivery/")
    assert delivery.status == Page.Status.FAILED
    assert delivery.reason == "адрес 127.0.0.1 во внутренней сети — такие адреса не обходим"
    assert trusted_site.requests_to("/delivery/") == []
    assert (run.status, run.fetched, run.failed) == (CrawlRun.Status.DONE, 1, 1)
