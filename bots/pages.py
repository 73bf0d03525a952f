"""What every owner page (templates/owner/base.html) needs: the bot named in the URL, scoped to the
bots the person owns, and the layout's context. A bot the person does not own is a 404, the same
as one that does not exist: its slug must not be confirmed to strangers or to its operators."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.shortcuts import get_object_or_404

from bots.models import Bot
from bots.selectors import owned_bots


def owner_bot(request: HttpRequest, slug: str) -> Bot:
    """The bot `slug` if `request.user` owns it; Http404 otherwise."""
    return get_object_or_404(owned_bots(request.user), slug=slug)


def owner_context(request: HttpRequest, bot: Bot, *, section: str, title: str) -> dict[str, Any]:
    """The layout's context: the current bot, the bot switcher's list, the highlighted section."""
    return {"bot": bot, "bots": _switcher(request), "section": section, "title": title}


def owner_frame(request: HttpRequest, bot_id: int | None, *, section: str) -> dict[str, Any]:
    """The owner header (templates/owner/_header.html) on a page that lives in the admin, the review
    queue and Gaps: the tabs of the bot the page is filtered to when the person owns it, else of their
    first bot; no tabs for someone who owns none. Keys of their own, beside the admin's context (whose
    `bots` may hold a bot the person only operates)."""
    bots = _switcher(request)
    bot = next((b for b in bots if b.pk == bot_id), bots[0] if bots else None)
    return {"owner_bot": bot, "owner_bots": bots, "section": section}


def _switcher(request: HttpRequest) -> list[Bot]:
    return list(owned_bots(request.user).order_by("name", "pk").only("pk", "name", "slug"))
