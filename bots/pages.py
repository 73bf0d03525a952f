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
    bots = list(owned_bots(request.user).order_by("name", "pk").only("pk", "name", "slug"))
    return {"bot": bot, "bots": bots, "section": section, "title": title}
