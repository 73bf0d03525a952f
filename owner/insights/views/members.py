"""`/b/<slug>/members/`: the bot's owners and operators, invitations by e-mail, role changes and
removals (the rules, the e-mail and the history lines are bots.members'). A membership
or invitation id of another bot is a 404, like one that does not exist."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _

from bots import members
from bots.models import Bot, Membership


def _int(value: str | None) -> int:
    try:
        return int(value or "")
    except ValueError:
        return 0


@login_required(login_url="login")
def members_page(request: HttpRequest, slug: str) -> HttpResponse:
    from bots.pages import owner_bot, owner_context

    bot = owner_bot(request, slug)
    if request.method == "POST":
        _act(request, bot)
        return HttpResponseRedirect(reverse("insights:members", args=[bot.slug]))
    context = owner_context(request, bot, section="members", title=_("Участники бота"))
    context |= {
        "memberships": bot.memberships.select_related("user").order_by("role", "user__username"),
        "invitations": bot.invitations.filter(accepted_at__isnull=True, revoked_at__isnull=True).select_related(
            "invited_by"),
        "roles": Membership.Role.choices, "days": settings.INVITE_MAX_AGE_DAYS,
        "history": members.bot_history(bot=bot, limit=50),
    }
    return render(request, "insights/members.html", context)


def _act(request: HttpRequest, bot: Bot) -> None:
    action, post = request.POST.get("action", ""), request.POST
    try:
        if action == "invite":
            invitation, link = members.invitation_create(
                bot=bot, email=post.get("email", ""), role=post.get("role", ""), invited_by=request.user)
            messages.success(request, _("Приглашение отправлено на %(email)s. Если письмо не дойдёт, передайте "
                                        "ссылку сами: %(link)s") % {"email": invitation.email, "link": link})
        elif action in ("role", "remove"):
            membership = bot.memberships.select_related("user").filter(pk=_int(post.get("membership"))).first()
            if membership is None:
                raise Http404
            if action == "role":
                members.membership_role_set(membership=membership, role=post.get("role", ""), actor=request.user)
                messages.success(request, _("Роль изменена."))
            else:
                members.membership_remove_by(membership=membership, actor=request.user)
                messages.success(request, _("Участник удалён."))
        elif action == "revoke":
            pending = bot.invitations.filter(pk=_int(post.get("invitation"))).first()
            if pending is None:
                raise Http404
            members.invitation_revoke(invitation=pending, actor=request.user)
            messages.success(request, _("Приглашение отозвано."))
        else:
            raise Http404
    except members.MembersError as exc:
        messages.error(request, exc.message)
