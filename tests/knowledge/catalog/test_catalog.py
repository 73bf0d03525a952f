"""Importing a product feed (YML, CSV) from a file and by URL: what is stored, what is refused, and
that a refused feed loses nothing stored before."""

from __future__ import annotations

import io
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from knowledge.catalog import catalog, feeds
from knowledge.catalog.models import CatalogImport, CatalogOffer

pytestmark = pytest.mark.django_db

YML = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE yml_catalog SYSTEM "shops.dtd">
<yml_catalog date="2026-12-01 10:00">
  <shop>
    <name>ТехноДом</name>
    <currencies><currency id="RUB" rate="1"/></currencies>
    <categories>
      <category id="1">Техника для дома</category>
      <category id="2" parentId="1">Пылесосы</category>
    </categories>
    <offers>
      <offer id="vc-100" available="true">
        <url>https://shop.example/p/vc-100</url>
        <price>12 990</price>
        <oldprice>15990</oldprice>
        <currencyId>RUB</currencyId>
        <categoryId>2</categoryId>
        <picture>https://shop.example/img/vc-100.jpg</picture>
        <name>Пылесос Вихрь 100</name>
        <vendor>Вихрь</vendor>
        <description><![CDATA[<p>Мощный <b>циклонный</b> пылесос.</p>]]></description>
        <param name="Мощность" unit="Вт">1800</param>
      </offer>
      <offer id="vc-200" available="false">
        <url>javascript:alert(1)</url>
        <price>21990.50</price>
        <currencyId>RUB</currencyId>
        <categoryId>2</categoryId>
        <name>Пылесос Вихрь 200</name>
      </offer>
      <offer id="bad-1"><price>-5</price><name>Минус</name></offer>
      <offer id="bad-2"><price>дорого</price><name>Не число</name></offer>
      <offer><price>10</price><name>Без id</name></offer>
    </offers>
  </shop>
</yml_catalog>
""".encode()

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<yml_catalog><shop><offers><offer id="1"><name>&lol3;</name><price>1</price></offer></offers></shop></yml_catalog>"""

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE yml_catalog [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<yml_catalog><shop><offers><offer id="1"><name>&secret;</name><price>1</price></offer></offers></shop></yml_catalog>"""

CSV = "id;name;price;oldprice;category;vendor;available;url\n" \
      "k-1;Чайник Ключ;2 490,00;2990;Кухонная техника;Ключ;да;https://shop.example/p/k-1\n" \
      "k-2;Чайник Пар;-100;;Кухонная техника;Пар;нет;\n"


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_a_yml_feed_is_imported_with_categories_params_and_plain_descriptions(bot):
    imported = catalog.catalog_import_bytes(bot=bot, data=YML, name="feed.xml")
    run = imported.run
    assert (run.status, run.added, run.changed, run.removed, run.skipped) == ("done", 2, 0, 0, 3)
    problems = run.problems_shown
    assert any("цена меньше нуля" in p for p in problems) and any("не число" in p for p in problems)
    assert imported.source.kind == "catalog"
    first = CatalogOffer.objects.get(offer_id="vc-100")
    assert (first.price, first.old_price, first.available) == (Decimal("12990.00"), Decimal("15990.00"), True)
    assert first.category == "Техника для дома / Пылесосы" and first.vendor == "Вихрь"
    assert first.description == "Мощный циклонный пылесос." and first.params == {"Мощность": "1800 Вт"}
    assert first.picture == "https://shop.example/img/vc-100.jpg"
    second = CatalogOffer.objects.get(offer_id="vc-200")
    assert second.available is False and second.url == "" and second.price == Decimal("21990.50")


def test_a_new_version_of_the_feed_counts_added_changed_and_removed(bot):
    catalog.catalog_import_bytes(bot=bot, data=YML, name="feed.xml")
    newer = YML.replace(b"<price>12 990</price>", b"<price>11990</price>").replace(
        b'<offer id="vc-200" available="false">', b'<offer id="vc-300" available="true">')
    run = catalog.catalog_import_bytes(bot=bot, data=newer, name="feed.xml").run
    assert (run.added, run.changed, run.removed) == (1, 1, 1)
    again = catalog.catalog_import_bytes(bot=bot, data=newer, name="feed.xml").run
    assert (again.added, again.changed, again.removed) == (0, 0, 0)
    assert sorted(CatalogOffer.objects.values_list("offer_id", flat=True)) == ["vc-100", "vc-300"]
    assert CatalogOffer.objects.get(offer_id="vc-100").price == Decimal("11990.00")


@pytest.mark.parametrize(("data", "reason"), [
    (b"<html><body>not a feed</body></html>", "не фид YML"),
    (b"<yml_catalog><shop><offers><offer", "не читается как XML"),
    (BILLION_LAUGHS, "объявлены свои сущности"),
    (XXE, "объявлены свои сущности"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00binary", "двоичные данные"),
    (b"sku;cost\nfoo;1\n", "нет столбцов: name, price"),
    (b'<yml_catalog><shop><offers><offer id="1"><name>x</name><price>-1</price></offer></offers></shop></yml_catalog>',
     "нет ни одного товара"),
])
def test_a_bad_feed_is_refused_with_a_reason_and_the_stored_catalog_stays(bot, data, reason):
    catalog.catalog_import_bytes(bot=bot, data=YML, name="feed.xml")
    run = catalog.catalog_import_bytes(bot=bot, data=data, name="feed.xml").run
    assert run.status == "failed" and reason in run.message
    assert CatalogOffer.objects.count() == 2


def test_entities_never_reach_a_stored_name(bot):
    for data in (BILLION_LAUGHS, XXE):
        catalog.catalog_import_bytes(bot=bot, data=data, name="feed.xml")
    assert not CatalogOffer.objects.exists()


def test_a_csv_feed_with_named_columns(bot):
    run = catalog.catalog_import_bytes(bot=bot, data=CSV.encode("cp1251"), name="price.csv").run
    assert (run.status, run.added, run.skipped) == ("done", 1, 1) and "цена меньше нуля" in run.problems_shown[0]
    offer = CatalogOffer.objects.get()
    assert (offer.offer_id, offer.price, offer.old_price, offer.available) == (
        "k-1", Decimal("2490.00"), Decimal("2990.00"), True)
    binary = catalog.catalog_import_bytes(bot=bot, data=b"\x89PNG\r\n\x1a\n\x00\x00binary", name="price.csv").run
    assert binary.status == "failed" and "двоичные данные" in binary.message


def test_a_200_mb_file_is_refused_before_it_is_read(bot, tmp_path, settings):
    path = tmp_path / "huge.xml"
    with path.open("wb") as handle:
        handle.truncate(200 * 1024 * 1024)  # sparse: 200 MB on paper, nothing written
    run = catalog.catalog_import_file(bot=bot, path=path).run
    assert run.status == "failed" and "фид больше 50 МБ" in run.message


class _Feeds(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/huge.xml":
            self.send_response(200)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(200 * 1024 * 1024))
            self.end_headers()
            return
        body = YML if self.path == "/feed.xml" else b"missing"
        self.send_response(200 if self.path == "/feed.xml" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def feed_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Feeds)
    server.daemon_threads, server.block_on_close = True, False
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_feed_by_url_and_a_200_mb_download_refused_by_its_declared_length(bot, feed_server):
    run = catalog.catalog_import_url(bot=bot, url=f"{feed_server}/feed.xml").run
    assert (run.status, run.added) == ("done", 2)
    huge = catalog.catalog_import_url(bot=bot, url=f"{feed_server}/huge.xml").run
    assert huge.status == "failed" and "больше 50 МБ" in huge.message
    missing = catalog.catalog_import_url(bot=bot, url=f"{feed_server}/gone.xml").run
    assert missing.status == "failed" and "404" in missing.message
    assert CatalogOffer.objects.count() == 2


def test_a_feed_on_a_private_address_is_refused(bot, settings):
    settings.CRAWL_ALLOW_PRIVATE = False
    run = catalog.catalog_import_url(bot=bot, url="http://10.0.0.1/feed.xml").run
    assert run.status == "failed" and "внутренней сети" in run.message


def test_the_command_imports_and_explains_a_refusal(bot, tmp_path):
    out = io.StringIO()
    call_command("importcatalog", bot.slug, str(_write(tmp_path, "feed.xml", YML)), stdout=out)
    assert "добавлено 2" in out.getvalue() and "пропущено 3" in out.getvalue()
    with pytest.raises(CommandError, match=r"объявлены свои сущности.*не изменились"):
        call_command("importcatalog", bot.slug, str(_write(tmp_path, "evil.xml", BILLION_LAUGHS)))
    with pytest.raises(CommandError, match="не найден"):
        call_command("importcatalog", bot.slug, str(tmp_path / "nope.csv"))
    assert CatalogImport.objects.filter(status="failed").count() == 1


def test_feed_kind_is_told_by_the_content():
    assert feeds.feed_kind(b"\xef\xbb\xbf  <?xml") == "yml"
    assert feeds.feed_kind(b"id,name,price") == "csv"


def test_a_feed_by_url_is_refreshed_on_its_schedule_with_counts(bot, feed_server, celery_worker_thread):
    from datetime import timedelta

    from knowledge.catalog import tasks

    imported = catalog.catalog_import_url(bot=bot, url=f"{feed_server}/feed.xml")
    assert catalog.catalogs_due() == []  # no schedule: only by hand
    catalog.catalog_schedule(source=imported.source, every_hours=6)
    assert catalog.catalogs_due() == []  # imported just now
    CatalogImport.objects.update(created_at=timezone.now() - timedelta(hours=7))
    assert [s.pk for s in catalog.catalogs_due()] == [imported.source.pk]
    assert tasks.catalog_refresh_due.delay() is not None
    deadline = time.monotonic() + 30
    while not CatalogImport.objects.filter(scheduled=True).exists():
        assert time.monotonic() < deadline, "the scheduled refresh did not run"
        time.sleep(0.1)
    run = CatalogImport.objects.get(scheduled=True)
    assert (run.status, run.added, run.changed, run.removed) == ("done", 0, 0, 0)
    assert catalog.catalogs_due() == []


def test_a_schedule_needs_an_address_and_sane_hours(bot, tmp_path, feed_server):
    upload = catalog.catalog_import_bytes(bot=bot, data=YML, name="feed.xml")
    with pytest.raises(feeds.FeedError, match="только фид по адресу"):
        catalog.catalog_schedule(source=upload.source, every_hours=6)
    by_url = catalog.catalog_import_url(bot=bot, url=f"{feed_server}/feed.xml")
    with pytest.raises(feeds.FeedError, match="не чаще раза в час"):
        catalog.catalog_schedule(source=by_url.source, every_hours=0)
    out = io.StringIO()
    call_command("importcatalog", bot.slug, f"{feed_server}/feed.xml", "--every-hours", "24", stdout=out)
    assert "каждые 24 ч" in out.getvalue()
    by_url.source.refresh_from_db()
    assert by_url.source.recrawl_hours == 24


def test_an_import_s_message_and_skipped_offers_read_in_the_reader_s_language(bot):
    from django.utils import translation

    done = catalog.catalog_import_bytes(bot=bot, data=CSV.encode("cp1251"), name="price.csv").run
    failed = catalog.catalog_import_bytes(bot=bot, data=b"id;title\n1;x\n", name="bad.csv").run

    assert done.message == "товаров в фиде: 1" and failed.message.startswith("в первой строке CSV нет столбцов")
    with translation.override("en"):
        assert done.message_shown == "products in the feed: 1"
        assert done.problems_shown == ["line 3: the price is below zero (-100)"]
        assert failed.message_shown == "the first line of the CSV lacks the columns: price (id, name, price are needed)"
    with translation.override("ru"):
        assert done.problems_shown == ["строка 3: цена меньше нуля (-100)"]
        assert failed.message_shown == "в первой строке CSV нет столбцов: price (нужны id, name, price)"


def test_an_import_written_before_stored_texts_shows_what_it_said(bot):
    from django.utils import translation

    from knowledge.models import Source

    source = Source.objects.create(bot=bot, kind=Source.Kind.CATALOG, title="Каталог: старый")
    run = CatalogImport.objects.create(bot=bot, source=source, status=CatalogImport.Status.DONE,
                                       message="товаров в фиде: 7", problems=["строка 2: нет цены"])
    with translation.override("en"):
        assert (run.message_shown, run.problems_shown) == ("товаров в фиде: 7", ["строка 2: нет цены"])
