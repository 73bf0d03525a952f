"""What one crawled URL does to the knowledge base: the Page row, its entries, and an outcome the
crawler counts. Runs on the crawler's own thread (ORM), one transaction per page.

Reasons are addressed to a shop owner and stored untranslated (core/texts.py) on the Page row
(`reason_stored`, its Russian in `reason`) and tallied, identical reasons together, in the run's
summary; both are shown in the reader's language.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from core.http import FetchError, FetchTimeout, Response, TooLarge, Unreachable
from core.texts import Stored, Text, stored, stored_pair
from knowledge.chunking import page_drafts
from knowledge.drafts import EntryDraft, content_hash
from knowledge.extract import html_extract
from knowledge.models import Page, Source
from knowledge.services import entries_replace_for_page, page_deactivate

HTML_TYPES = {"text/html", "application/xhtml+xml", ""}
GONE_STATUSES = {404, 410}
KEEP_ENTRIES_ON = (FetchTimeout, Unreachable)  # temporary trouble: what the page said still holds
ROBOTS_DENIED: Stored = stored(gettext_noop("запрещено robots.txt"))
NOINDEX: Stored = stored(gettext_noop("страница закрыта от индексации (noindex)"))
NO_TEXT: Stored = stored(gettext_noop("на странице не найден текст"))
UNLINKED: Stored = stored(gettext_noop("страница больше не встречается на сайте: на неё нет ссылок и её нет в sitemap"))


class NotHtml(FetchError):
    pass


@dataclass
class PageOutcome:
    """kind: fetched | unchanged | skipped | failed, or "" for a redirect (counted at its target)."""

    kind: str
    reason: Text = ""
    page: Page | None = None
    links: list[str] | None = field(default=None)  # None: this answer told nothing about links
    counts: dict[str, int] = field(default_factory=dict)


def only_html(_status: int, headers: httpx.Headers) -> None:
    """Refuse a page body that is not HTML before reading it (a 5 MB PNG stays on the server)."""
    media = headers.get("content-type", "").split(";")[0].strip().lower()
    if media not in HTML_TYPES:
        raise NotHtml(stored(gettext_noop("не HTML (%(media)s)"), media=media))


def conditional_headers(page: Page | None, *, source: Source) -> dict[str, str]:
    """If-None-Match / If-Modified-Since only for a page whose entries are in place: a 304 then
    safely means "keep what you have"."""
    if page is None or page.source_id != source.pk or page.status != Page.Status.OK or not page.active:
        return {}
    headers = {}
    if page.etag:
        headers["If-None-Match"] = page.etag
    if page.last_modified:
        headers["If-Modified-Since"] = page.last_modified
    return headers


def _save(page: Page | None, *, source: Source, url: str, **fields: Any) -> Page:
    fields.setdefault("fetched_at", timezone.now())
    if "reason" in fields:
        fields["reason"], fields["reason_stored"] = stored_pair(fields["reason"], 500)
    if page is None:
        return Page.objects.create(bot_id=source.bot_id, source=source, url=url, **fields)
    for name, value in fields.items():
        setattr(page, name, value)
    page.save(update_fields=list(fields))
    return page


@transaction.atomic
def _withdraw(page: Page | None, *, source: Source, url: str, status: str, reason: Text,
              http_status: int | None = None) -> PageOutcome:
    """The page is not (or no longer) knowledge: record why and switch its chunks off."""
    page = _save(page, source=source, url=url, status=status, reason=reason, active=False,
                 http_status=http_status, content_hash="", etag="", last_modified="")
    counts = entries_replace_for_page(page=page, drafts=[])
    kind = "skipped" if status == Page.Status.SKIPPED else "failed"
    return PageOutcome(kind, reason, page, counts={"deactivated": counts["deactivated"]})


def foreign(page: Page | None, *, source: Source) -> PageOutcome | None:
    """A URL already crawled under another source of this bot is left to that source, so one page
    never gets two sets of entries."""
    if page is None or page.source_id == source.pk:
        return None
    return PageOutcome("skipped", stored(gettext_noop("уже в знаниях из источника «%(source)s»"),
                                         source=str(page.source)))


def robots_denied(*, page: Page | None, source: Source, url: str) -> PageOutcome:
    return foreign(page, source=source) or _withdraw(
        page, source=source, url=url, status=Page.Status.SKIPPED, reason=ROBOTS_DENIED)


def fetch_failed(*, page: Page | None, source: Source, url: str, error: FetchError) -> PageOutcome:
    if outcome := foreign(page, source=source):
        return outcome
    status = Page.Status.SKIPPED if isinstance(error, (TooLarge, NotHtml)) else Page.Status.FAILED
    if page is not None and page.active and isinstance(error, KEEP_ENTRIES_ON):
        page = _save(page, source=source, url=url, status=status, reason=error.text)
        return PageOutcome("failed", error.text, page)
    return _withdraw(page, source=source, url=url, status=status, reason=error.text)


def redirected(*, page: Page | None, source: Source, url: str, target: str, same_site: bool) -> PageOutcome:
    """A URL that answers with a redirect holds no content of its own. It gets a Page row only if
    it had one (its old entries are switched off) or if it leads off the site."""
    if outcome := foreign(page, source=source):
        return outcome
    if same_site and page is None:
        return PageOutcome("")
    if same_site:
        outcome = _withdraw(page, source=source, url=url, status=Page.Status.SKIPPED,
                            reason=stored(gettext_noop("переадресация на %(target)s"), target=target[:450]))
        outcome.kind = ""
        return outcome
    host = urlsplit(target).netloc
    return _withdraw(page, source=source, url=url, status=Page.Status.SKIPPED,
                     reason=stored(gettext_noop("переадресация на другой сайт (%(host)s)"), host=host[:400]))


def page_retire(*, page: Page) -> int:
    return page_deactivate(page=page, reason=UNLINKED)


def _drafts_hash(drafts: list[EntryDraft]) -> str:
    return content_hash(*[part for d in drafts for part in (d.key, d.title, d.heading_path, d.url, d.text)])


def _validators(response: Response) -> dict[str, Any]:
    return {"etag": response.headers.get("etag", "")[:300],
            "last_modified": response.headers.get("last-modified", "")[:100], "http_status": response.status}


def _not_ok(page: Page | None, *, source: Source, url: str, response: Response) -> PageOutcome:
    if response.status == 304 and page is not None:
        _save(page, source=source, url=url, http_status=304)
        return PageOutcome("unchanged", page=page)
    if response.status in GONE_STATUSES and page is not None and page.active:
        reason: Stored = stored(gettext_noop("HTTP %(status)s — страницы больше нет"), status=response.status)
        deactivated = page_deactivate(page=page, reason=reason)
        _save(page, source=source, url=url, http_status=response.status)
        return PageOutcome("failed", reason, page, counts={"deactivated": deactivated})
    reason = stored(gettext_noop("HTTP %(status)s"), status=response.status)
    if page is not None and page.active and response.status >= 500:
        page = _save(page, source=source, url=url, status=Page.Status.FAILED, reason=reason,
                     http_status=response.status)
        return PageOutcome("failed", reason, page)  # a server hiccup: keep what the page said
    return _withdraw(page, source=source, url=url, status=Page.Status.FAILED, reason=reason,
                     http_status=response.status)


def page_store(*, page: Page | None, source: Source, url: str, response: Response) -> PageOutcome:
    """A fetched answer into Page + entries. Unchanged text (same drafts) writes no entries at all."""
    if outcome := foreign(page, source=source):
        return outcome
    if not 200 <= response.status < 300:
        return _not_ok(page, source=source, url=url, response=response)
    extracted = html_extract(response.body, url=url, charset=response.charset)
    links = extracted.links
    if extracted.noindex or not extracted.blocks:
        reason = NOINDEX if extracted.noindex else NO_TEXT
        outcome = _withdraw(page, source=source, url=url, status=Page.Status.SKIPPED, reason=reason,
                            http_status=response.status)
        outcome.links = links
        return outcome
    drafts = page_drafts(url=url, title=extracted.title, blocks=extracted.blocks)
    digest = _drafts_hash(drafts)
    if page is not None and page.active and page.status == Page.Status.OK and page.content_hash == digest:
        _save(page, source=source, url=url, **_validators(response))
        return PageOutcome("unchanged", page=page, links=links)
    with transaction.atomic():
        page = _save(page, source=source, url=url, title=extracted.title[:500], status=Page.Status.OK,
                     reason="", active=True, content_hash=digest, **_validators(response))
        counts = entries_replace_for_page(page=page, drafts=drafts)
    return PageOutcome("fetched", page=page, links=links, counts=counts)


def reason_key(reason: Text) -> str:
    """A reason as a Counter key (stored texts are dicts): the same reason, the same key."""
    return reason if isinstance(reason, str) else json.dumps(reason, sort_keys=True, ensure_ascii=False)


def summary_reasons(reasons: Counter[tuple[str, str]]) -> list[Stored]:
    """The run's message, one stored text per line: skipped and failed URLs grouped by reason (keys
    from `reason_key`), most frequent first."""
    lines: list[Stored] = []
    headings = (("skipped", stored(gettext_noop("Пропущено:"))), ("failed", stored(gettext_noop("С ошибкой:"))))
    for kind, heading in headings:
        items = [(key, n) for (k, key), n in reasons.most_common() if k == kind]
        if items:
            lines.append(heading)
            lines.extend(stored(gettext_noop("  %(reason)s — %(n)s"), reason=_from_key(key), n=n) for key, n in items)
    return lines


def _from_key(key: str) -> Text:
    if key.startswith("{"):
        try:
            value = json.loads(key)
        except ValueError:
            return key
        return value if isinstance(value, dict) else key
    return key
