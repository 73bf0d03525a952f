"""`/b/<slug>/knowledge/`: sources with their last crawl and «Обойти снова», document uploads, and
the Q/A pairs edited in place. Every write goes through knowledge.services / knowledge.importing,
which version entries and make them searchable at once."""

from __future__ import annotations

from typing import Any, Final

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from bots.models import Bot
from bots.pages import owner_bot, owner_context
from knowledge.crawler import source_crawl
from knowledge.exceptions import EntryConflict, KnowledgeError
from knowledge.importing import document_import
from knowledge.indexing import embedding_request
from knowledge.models import Entry, Source
from knowledge.selectors import entries_of, sources_of
from knowledge.services import document_delete, entry_create, entry_edit
from knowledge.versions import REASON_DASHBOARD
from owner.dashboard.forms import DocumentForm, QAForm
from owner.dashboard.views.setup import with_last_runs

LOGIN_URL = "login"
QA_PAGE: Final = 50
CHANGE_REASON: Final = REASON_DASHBOARD


def _back(bot: Bot, anchor: str = "") -> HttpResponseRedirect:
    return HttpResponseRedirect(reverse("dashboard:knowledge", args=[bot.slug]) + anchor)


def _page(request: HttpRequest, bot: Bot, *, qa_form: QAForm | None = None, doc_form: DocumentForm | None = None,
          edit_errors: dict[int, Any] | None = None, status: int = 200) -> HttpResponse:
    sources = with_last_runs(bot, list(sources_of(bot=bot).order_by("kind", "pk")))
    pairs = entries_of(bot=bot).filter(kind=Entry.Kind.QA).order_by("-updated_at", "-pk")
    page = Paginator(pairs, QA_PAGE).get_page(request.GET.get("page"))
    for entry in page.object_list:  # each pair edits in place; a failed edit comes back as typed
        entry.edit_form = (edit_errors or {}).get(entry.pk)
    context = {
        **owner_context(request, bot, section="knowledge", title=_("Знания: %(name)s") % {"name": bot.name}),
        "sites": [s for s in sources if s.kind in (Source.Kind.SITE, Source.Kind.SITEMAP)],
        "documents": [s for s in sources if s.kind == Source.Kind.DOCUMENT],
        "qa_page": page, "qa_form": qa_form or QAForm(), "doc_form": doc_form or DocumentForm(),
    }
    return render(request, "dashboard/knowledge.html", context, status=status)


@login_required(login_url=LOGIN_URL)
@require_GET
def knowledge(request: HttpRequest, slug: str) -> HttpResponse:
    return _page(request, owner_bot(request, slug))


@login_required(login_url=LOGIN_URL)
@require_POST
def source_recrawl(request: HttpRequest, slug: str, source_id: int) -> HttpResponse:
    bot = owner_bot(request, slug)
    source = get_object_or_404(sources_of(bot=bot), pk=source_id)
    try:
        source_crawl(source=source)
    except KnowledgeError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, _("Обход «%(title)s» запущен.") % {"title": source.title or source.url})
    return _back(bot, "#sites")


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@login_required(login_url=LOGIN_URL)
@require_POST
def document_upload(request: HttpRequest, slug: str) -> HttpResponse:
    """A document becomes chunks of its own source (knowledge.importing.document_import): nothing
    is saved from a file that cannot be read. The page's script sends it with XHR to show the
    upload's progress and asks for JSON; without script the form posts and the page comes back."""
    bot = owner_bot(request, slug)
    form = DocumentForm(request.POST, request.FILES)
    error = ""
    if form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            result = document_import(bot=bot, filename=upload.name, data=upload.read(), url=form.cleaned_data["url"])
        except KnowledgeError as exc:
            error = exc.message
        else:
            embedding_request(bot_id=bot.pk)  # vectors on the embed queue, after commit
            text = _("«%(name)s»: %(summary)s.") % {"name": result.source.title, "summary": result.summary()}
            if _wants_json(request):
                return JsonResponse({"ok": True, "message": text, "source": result.source.pk,
                                     "created": result.created, "updated": result.updated})
            messages.success(request, text)
            return _back(bot, "#documents")
    else:
        error = " ".join(str(e) for errors in form.errors.values() for e in errors)
    if _wants_json(request):
        return JsonResponse({"ok": False, "message": error}, status=400)
    messages.error(request, error)
    return _page(request, bot, doc_form=form, status=400)


@login_required(login_url=LOGIN_URL)
@require_POST
def document_remove(request: HttpRequest, slug: str, source_id: int) -> HttpResponse:
    """Delete an uploaded document: its entries are switched off (versioned, restorable in the
    admin's history) and leave search; another bot's document is a 404 like a missing one."""
    bot = owner_bot(request, slug)
    source = get_object_or_404(sources_of(bot=bot).filter(kind=Source.Kind.DOCUMENT), pk=source_id)
    count = document_delete(source=source, reason=CHANGE_REASON)
    messages.success(request, _("Документ «%(name)s» удалён, бот больше не отвечает по нему (фрагментов: %(count)s).")
                     % {"name": source.title, "count": count})
    return _back(bot, "#documents")


@login_required(login_url=LOGIN_URL)
@require_POST
def qa_add(request: HttpRequest, slug: str) -> HttpResponse:
    bot = owner_bot(request, slug)
    form = QAForm(request.POST)
    if form.is_valid():
        try:
            entry_create(bot=bot, kind=Entry.Kind.QA, title=form.cleaned_data["question"],
                         text=form.cleaned_data["answer"], reason=CHANGE_REASON)
        except EntryConflict as exc:
            form.add_error("question", exc.message)
        except KnowledgeError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, _("Пара «вопрос — ответ» добавлена."))
            return _back(bot, "#qa")
    return _page(request, bot, qa_form=form, status=400)


@login_required(login_url=LOGIN_URL)
@require_POST
def qa_edit(request: HttpRequest, slug: str, entry_id: int) -> HttpResponse:
    """Change a pair's wording, or switch it off / on (kept and versioned either way)."""
    bot = owner_bot(request, slug)
    entry = get_object_or_404(entries_of(bot=bot).filter(kind=Entry.Kind.QA), pk=entry_id)
    action = request.POST.get("action", "save")
    changes: dict[str, object]
    if action in ("deactivate", "activate"):
        changes = {"active": action == "activate"}
    else:
        form = QAForm(request.POST, prefix=f"qa{entry.pk}")
        if not form.is_valid():
            return _page(request, bot, edit_errors={entry.pk: form}, status=400)
        changes = {"title": form.cleaned_data["question"], "text": form.cleaned_data["answer"]}
    try:
        entry_edit(entry=entry, changes=changes, reason=CHANGE_REASON)
    except KnowledgeError as exc:
        form = QAForm(request.POST, prefix=f"qa{entry.pk}")
        form.is_valid()
        form.add_error(None, exc.message)
        return _page(request, bot, edit_errors={entry.pk: form}, status=400)
    messages.success(request, _("Запись №%(id)s сохранена.") % {"id": entry.pk})
    return _back(bot, f"#qa-{entry.pk}")
