"""Catalog import speed: a 10,000-offer YML feed (the Yandex Market format) into a bot's catalog.

    python bench/catalog_import.py [--offers 10000]

The feed is generated (categories, prices, old prices, pictures, params, CDATA descriptions) and
written to a file; rows:

- baseline: lxml parsing the same bytes alone (what any reader of the file pays);
- parse: feeds.parse_feed (the parser with its checks, no database);
- first import: `catalog_import_file` into an empty catalog (all added);
- re-import unchanged: the same file again (nothing written);
- re-import with 10 % of prices changed and 5 % of offers replaced (changed / added / removed).

Target (issue 13): ≤ 60 s for the first import of 10,000 offers. Embeddings of offers are not
part of it: product search by meaning is not built yet. The bench bot (`bench-catalog`) is
deleted at the end.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

SLUG = "bench-catalog"
TARGET_S = 60.0
WORDS = ["Пылесос", "Чайник", "Кофемашина", "Светильник", "Кондиционер", "Утюг", "Блендер", "Удлинитель"]
VENDORS = ["Вихрь", "Ключ", "Пар", "Свет", "Холод", "Дом"]


def make_feed(offers: int, *, seed: int = 1, price_shift: float = 0.0, replace: float = 0.0) -> bytes:
    rng = random.Random(seed)
    changed = random.Random(seed + 1)
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<yml_catalog date="2026-12-01 10:00"><shop>'
             "<name>ТехноДом</name><categories>"]
    parts += [f'<category id="{i}">Категория {i}</category>' for i in range(1, 41)]
    parts.append("</categories><offers>")
    for i in range(offers):
        offer_id = f"new-{i}" if changed.random() < replace else f"sku-{i}"
        price = rng.randint(500, 90000)
        if changed.random() < price_shift:
            price += 100
        word, vendor = rng.choice(WORDS), rng.choice(VENDORS)
        parts.append(
            f'<offer id="{offer_id}" available="{"true" if rng.random() < 0.8 else "false"}">'
            f"<url>https://shop.example/p/{offer_id}</url><price>{price}</price><oldprice>{price + 1000}</oldprice>"
            f"<currencyId>RUB</currencyId><categoryId>{rng.randint(1, 40)}</categoryId>"
            f"<picture>https://shop.example/img/{offer_id}.jpg</picture><name>{word} {vendor} {i}</name>"
            f"<vendor>{vendor}</vendor><description><![CDATA[<p>{word} {vendor}: модель {i}, "
            f"гарантия 2 года, доставка по Москве.</p>]]></description>"
            f'<param name="Мощность" unit="Вт">{rng.randint(100, 2500)}</param><param name="Цвет">белый</param>'
            "</offer>"
        )
    parts.append("</offers></shop></yml_catalog>")
    return "".join(parts).encode()


def timed(call: object) -> tuple[float, object]:
    started = time.perf_counter()
    result = call()  # type: ignore[operator]
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=10000)
    args = parser.parse_args()
    common.setup_django()
    from lxml import etree

    from assistant.commerce import catalog, feeds
    from assistant.commerce.models import CatalogOffer

    bot = common.bench_bot(SLUG, fresh=True)
    folder = Path(tempfile.mkdtemp(prefix="spravka-catalog-"))
    first, second = folder / "feed.xml", folder / "feed-2.xml"
    first.write_bytes(make_feed(args.offers))
    second.write_bytes(make_feed(args.offers, price_shift=0.10, replace=0.05))
    size_mb = first.stat().st_size / 1024 / 1024
    print(f"# Catalog import — {common.machine()}\n")
    print(f"{args.offers} offers, feed {size_mb:.1f} MB.\n")
    print("| step | time, s | added / changed / removed / skipped | target |")
    print("|---|---|---|---|")
    try:
        data = first.read_bytes()
        parse_s, _root = timed(lambda: etree.fromstring(data, etree.XMLParser(resolve_entities=False)))
        print(f"| baseline: lxml parse alone | {parse_s:.2f} | — | — |")
        ours_s, parsed = timed(lambda: feeds.parse_feed(data))
        print(f"| parse with checks (no database) | {ours_s:.2f} | {len(parsed.offers)} offers |"  # type: ignore[attr-defined]
              " — |")
        for label, path in (("first import", first), ("re-import unchanged", first),
                            ("re-import: 10 % prices, 5 % offers replaced", second)):
            seconds, imported = timed(lambda path=path: catalog.catalog_import_file(bot=bot, path=path))
            run = imported.run  # type: ignore[attr-defined]
            assert run.status == "done", run.message
            verdict = ("met" if seconds <= TARGET_S else "not met") if label == "first import" else "—"
            print(f"| {label} | {seconds:.2f} | {run.added} / {run.changed} / {run.removed} / {run.skipped} "
                  f"| {verdict} |")
        print(f"\n{CatalogOffer.objects.filter(bot=bot).count()} offers stored at the end.")
    finally:
        CatalogOffer.objects.filter(bot=bot).delete()
        common.drop_bot(SLUG)
        for path in (first, second):
            path.unlink(missing_ok=True)
        folder.rmdir()


if __name__ == "__main__":
    main()
