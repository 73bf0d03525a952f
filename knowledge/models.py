"""The Knowledge layer: where facts come from (Source, Page) and what search finds (Entry).

Entry.embedding has no fixed dimension: each local model keeps its own partial HNSW index
(see migration 0002), so switching models is a re-embed, not a schema change.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField
from simple_history.models import HistoricalRecords

from bots.models import Bot
from core.texts import shown
from core.validators import WebAddressFields, validate_link, validate_web_url


class Source(WebAddressFields):
    web_address_fields = {"url": validate_web_url}

    class Kind(models.TextChoices):
        SITE = "site", _("сайт")
        SITEMAP = "sitemap", _("sitemap.xml")
        DOCUMENT = "document", _("документ")
        MANUAL = "manual", _("вручную")
        CATALOG = "catalog", _("каталог")

    bot = models.ForeignKey(Bot, verbose_name=_("бот"), on_delete=models.CASCADE, related_name="sources")
    kind = models.CharField(_("вид"), max_length=16, choices=Kind.choices)
    title = models.CharField(_("название"), max_length=300, blank=True)
    url = models.URLField(_("адрес"), max_length=2000, blank=True)
    max_pages = models.PositiveIntegerField(_("предел страниц"), default=500)
    recrawl_hours = models.PositiveIntegerField(
        _("обходить каждые, ч"), null=True, blank=True, help_text=_("Пусто — только вручную.")
    )
    last_crawled_at = models.DateTimeField(_("последний обход"), null=True, blank=True)
    created_at = models.DateTimeField(verbose_name=_("создан"), auto_now_add=True)

    class Meta:
        verbose_name = _("источник")
        verbose_name_plural = _("источники")
        ordering = ["bot", "kind", "title"]

    def __str__(self) -> str:
        return self.title or self.url or self.get_kind_display()


class CrawlRun(models.Model):
    """One crawl or import of a source: its progress, counters and outcome, shown with a progress bar."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("в очереди")
        RUNNING = "running", _("идёт")
        EMBEDDING = "embedding", _("готовит поиск по смыслу")
        DONE = "done", _("готово")
        FAILED = "failed", _("ошибка")

    bot = models.ForeignKey(Bot, verbose_name=_("бот"), on_delete=models.CASCADE, related_name="crawl_runs")
    source = models.ForeignKey(Source, verbose_name=_("источник"), on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(_("состояние"), max_length=16, choices=Status.choices, default=Status.QUEUED)
    pages_total = models.PositiveIntegerField(_("страниц найдено"), default=0)
    pages_done = models.PositiveIntegerField(_("страниц обработано"), default=0)
    fetched = models.PositiveIntegerField(_("загружено"), default=0)
    unchanged = models.PositiveIntegerField(_("без изменений"), default=0)
    skipped = models.PositiveIntegerField(_("пропущено"), default=0)
    failed = models.PositiveIntegerField(_("с ошибкой"), default=0)
    entries_created = models.PositiveIntegerField(_("записей создано"), default=0)
    entries_updated = models.PositiveIntegerField(_("записей обновлено"), default=0)
    entries_deactivated = models.PositiveIntegerField(_("записей отключено"), default=0)
    embeddings_total = models.PositiveIntegerField(verbose_name=_("векторов нужно"), default=0)
    embeddings_done = models.PositiveIntegerField(verbose_name=_("векторов готово"), default=0)
    # Pages of this run whose every entry has a vector (knowledge/progress.py recounts it).
    pages_embedded = models.PositiveIntegerField(_("страниц с векторами"), default=0)
    message = models.TextField(_("сообщение"), blank=True)
    # The same message untranslated (core/texts.py), shown in the reader's language; null on
    # rows written before it, whose `message` is shown as it is.
    message_stored = models.JSONField(_("сообщение для перевода"), null=True, blank=True, editable=False)
    started_at = models.DateTimeField(verbose_name=_("начат"), auto_now_add=True)
    finished_at = models.DateTimeField(verbose_name=_("закончен"), null=True, blank=True)

    class Meta:
        verbose_name = _("обход")
        verbose_name_plural = _("обходы")
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"{self.source} · {self.get_status_display()}"

    @property
    def message_shown(self) -> str:
        """The message in the active language."""
        return shown(self.message_stored) if self.message_stored else self.message

    @property
    def pages_indexed(self) -> int:
        """Pages whose text is in search now (found by words at once; by meaning once embedded)."""
        return self.fetched + self.unchanged

    @property
    def percent(self) -> int:
        """Overall progress: fetching and embedding count half each; they run side by side."""
        if self.status == self.Status.DONE:
            return 100
        fetch = self.pages_done / self.pages_total if self.pages_total else 0.0
        fetch = min(fetch, 1.0)
        embed = min(self.embeddings_done / self.embeddings_total, 1.0) if self.embeddings_total else 0.0
        return int(100 * (0.5 * fetch + 0.5 * fetch * embed))


class Page(models.Model):
    class Status(models.TextChoices):
        OK = "ok", _("в знаниях")
        SKIPPED = "skipped", _("пропущена")
        FAILED = "failed", _("ошибка")
        GONE = "gone", _("исчезла")

    bot = models.ForeignKey(Bot, verbose_name=_("бот"), on_delete=models.CASCADE, related_name="pages")
    source = models.ForeignKey(Source, verbose_name=_("источник"), on_delete=models.CASCADE, related_name="pages")
    url = models.URLField(_("адрес"), max_length=2000)
    title = models.CharField(_("заголовок"), max_length=500, blank=True)
    status = models.CharField(_("состояние"), max_length=16, choices=Status.choices, default=Status.OK)
    reason = models.CharField(_("причина"), max_length=500, blank=True)
    reason_stored = models.JSONField(_("причина для перевода"), null=True, blank=True, editable=False)
    http_status = models.PositiveSmallIntegerField(verbose_name=_("код ответа HTTP"), null=True, blank=True)
    content_hash = models.CharField(verbose_name=_("хэш содержимого"), max_length=64, blank=True)
    etag = models.CharField(verbose_name=_("ETag"), max_length=300, blank=True)
    last_modified = models.CharField(verbose_name=_("изменена на сайте"), max_length=100, blank=True)
    fetched_at = models.DateTimeField(_("загружена"), null=True, blank=True)
    review_needed = models.BooleanField(_("нужна проверка"), default=False)
    active = models.BooleanField(_("активна"), default=True)

    class Meta:
        verbose_name = _("страница")
        verbose_name_plural = _("страницы")
        ordering = ["url"]
        constraints = [models.UniqueConstraint(fields=["bot", "url"], name="page_unique_bot_url")]

    def __str__(self) -> str:
        return self.title or self.url

    @property
    def reason_shown(self) -> str:
        """Why the page is not in the knowledge, in the active language."""
        return shown(self.reason_stored) if self.reason_stored else self.reason


class Entry(WebAddressFields):
    web_address_fields = {"url": validate_link}

    class Kind(models.TextChoices):
        CHUNK = "chunk", _("фрагмент страницы")
        QA = "qa", _("вопрос-ответ")
        CORRECTION = "correction", _("поправка")
        OPERATOR_ANSWER = "operator_answer", _("ответ оператора")

    bot = models.ForeignKey(Bot, verbose_name=_("бот"), on_delete=models.CASCADE, related_name="entries")
    source = models.ForeignKey(Source, verbose_name=_("источник"),
        on_delete=models.SET_NULL, null=True, blank=True, related_name="entries")
    page = models.ForeignKey(Page, verbose_name=_("страница"),
        on_delete=models.SET_NULL, null=True, blank=True, related_name="entries")
    kind = models.CharField(_("вид"), max_length=20, choices=Kind.choices, default=Kind.CHUNK)
    # A stable key inside (bot, source): a re-crawl or re-import updates the same row, never a twin.
    key = models.CharField(verbose_name=_("ключ"), max_length=500, blank=True)
    title = models.CharField(_("заголовок или вопрос"), max_length=1000, blank=True)
    heading_path = models.CharField(_("разделы"), max_length=1000, blank=True)
    text = models.TextField(_("текст или ответ"))
    url = models.CharField(_("адрес"), max_length=2000, blank=True)
    weight = models.FloatField(
        _("вес"), default=0.5, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text=_("0..1: чем выше, тем охотнее поиск выбирает запись."),
    )
    review_needed = models.BooleanField(_("нужна проверка"), default=False)
    # A correction's culprits: the entries that gave the wrong answer to its question. Search lowers
    # them for that question and its paraphrases only, never for the other questions they answer.
    supersedes = ArrayField(
        models.IntegerField(), verbose_name=_("исправляет записи"), default=list, db_default=[], blank=True,
        editable=False,
    )
    active = models.BooleanField(_("активна"), default=True)
    content_hash = models.CharField(verbose_name=_("хэш содержимого"), max_length=64, blank=True)
    embedding = VectorField(verbose_name=_("вектор"), null=True, blank=True)
    embedding_model = models.CharField(verbose_name=_("модель векторов"), max_length=64, blank=True)
    search_vector = models.GeneratedField(
        verbose_name=_("поисковый индекс"),
        expression=models.Func(
            models.F("title"), models.F("heading_path"), models.F("text"),
            template="to_tsvector('russian'::regconfig, %(expressions)s)",
            arg_joiner=" || ' ' || ",
            output_field=SearchVectorField(),
        ),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    created_at = models.DateTimeField(verbose_name=_("создана"), auto_now_add=True)
    updated_at = models.DateTimeField(verbose_name=_("изменена"), auto_now=True)
    history = HistoricalRecords(excluded_fields=["embedding", "search_vector", "updated_at"])

    class Meta:
        verbose_name = _("запись")
        verbose_name_plural = _("записи")
        ordering = ["-updated_at"]
        indexes = [
            GinIndex(fields=["search_vector"], name="entry_search_vector_gin"),
            models.Index(fields=["bot", "active"], name="entry_bot_active"),
            # One kind of a bot's entries, newest first: the dashboard's Q/A list among 100k page chunks.
            models.Index(fields=["bot", "kind", "-updated_at"], name="entry_bot_kind_recent"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["bot", "source", "key"], condition=~models.Q(key=""), name="entry_unique_source_key"
            ),
        ]

    def __str__(self) -> str:
        return self.title or self.text[:60]

    @property
    def is_correction(self) -> bool:
        return self.kind == self.Kind.CORRECTION


class Wording(models.Model):
    """One way a visitor asks an owner answer's question (a correction, a Q/A pair): its own title
    first, then the wordings the owner adds and the visitor's original one. A correction answers a
    visitor's question only when that question paraphrases one of its wordings (knowledge/
    paraphrase.py); the vector is the model's *query* vector, compared question to question. Written
    by knowledge/services.py only; vectors fill in with the entry's (knowledge/indexing.py)."""

    class Origin(models.TextChoices):
        QUESTION = "question", _("вопрос записи")
        OWNER = "owner", _("добавил владелец")
        VISITOR = "visitor", _("слова посетителя")

    bot = models.ForeignKey(Bot, verbose_name=_("бот"), on_delete=models.CASCADE, related_name="+")
    entry = models.ForeignKey(Entry, verbose_name=_("запись"), on_delete=models.CASCADE, related_name="wordings")
    text = models.CharField(_("формулировка"), max_length=1000)
    origin = models.CharField(_("откуда"), max_length=16, choices=Origin.choices, default=Origin.QUESTION)
    embedding = VectorField(verbose_name=_("вектор"), null=True, blank=True)
    embedding_model = models.CharField(verbose_name=_("модель векторов"), max_length=64, blank=True)
    created_at = models.DateTimeField(verbose_name=_("добавлена"), auto_now_add=True)

    class Meta:
        verbose_name = _("формулировка вопроса")
        verbose_name_plural = _("формулировки вопроса")
        ordering = ["entry", "pk"]
        constraints = [models.UniqueConstraint(fields=["entry", "text"], name="wording_unique_entry_text")]

    def __str__(self) -> str:
        return self.text


class Lexeme(models.Model):
    """Derived data for search: each 'russian' lexeme of a bot's active entries with its document
    frequency (lexeme '' holds the entry count). Rebuilt by knowledge.lexicon.lexicon_refresh,
    read by knowledge.search, never edited. It is a model (not a bare table) so that Django knows
    it: deleting a bot cascades to it and the test flush truncates it."""

    pk = models.CompositePrimaryKey("bot", "lexeme")
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="+")
    lexeme = models.TextField()
    df = models.IntegerField()

    class Meta:
        db_table = "knowledge_lexeme"

    def __str__(self) -> str:
        return self.lexeme
