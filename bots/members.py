"""Members of a bot: invitations by e-mail (a signed link that expires and works once), role changes
and removals, each written into the bot's history (the admin's «История» of the bot).

What must stay true:
- A bot always keeps at least one owner: the last owner can be neither demoted nor removed.
- An invitation link never sets the password of an account that already exists: its owner signs
  in first, as that account, and then accepts. A new account gets the password typed on the page.
- A link is the invitation's id signed with SECRET_KEY (django.core.signing): a changed letter,
  an expired, used or revoked link is refused with the reason, and nothing changes.
- Every write goes through `bots.services` (membership_add / membership_remove), so staff
  rights follow the roles.
- A line of the history is written in Russian, whoever acts (`note_written`: one of NOTE_FORMS
  filled in, roles by their Russian labels), and read in the reader's language (`note_shown`).
  Lines written before in an actor's English are recognised too; any other line (the admin's own,
  text of unknown form) is shown as it is.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any, Final

from django.conf import settings
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.auth.base_user import BaseUserManager
from django.contrib.contenttypes.models import ContentType
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from bots.models import Bot, Invitation, Membership
from bots.services import membership_add, membership_remove
from core.texts import written_form

log = logging.getLogger("spravka.members")
SALT: Final = "spravka.bots.invitation"


class MembersError(Exception):
    """A member change that was refused; `.message` says why, for the person who asked."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


NOTE_INVITED: Final = gettext_noop("Приглашение: %(email)s — %(role)s")
NOTE_ACCEPTED: Final = gettext_noop("%(email)s принял приглашение: %(role)s")
NOTE_REVOKED: Final = gettext_noop("Приглашение отозвано: %(email)s")
NOTE_ROLE_CHANGED: Final = gettext_noop("%(email)s: %(before)s → %(after)s")
NOTE_REMOVED: Final = gettext_noop("Удалён участник: %(email)s (%(role)s)")
NOTE_FORMS: Final = (NOTE_INVITED, NOTE_ACCEPTED, NOTE_REVOKED, NOTE_ROLE_CHANGED, NOTE_REMOVED)
ROLE_PARAMS: Final = frozenset({"role", "before", "after"})  # Membership.Role values, shown by their labels


def note_written(msgid: str, /, **params: str) -> str:
    """A line for the bot's history, in Russian: one of NOTE_FORMS; roles (ROLE_PARAMS) by value."""
    if msgid not in NOTE_FORMS:
        raise ValueError(f"not a form of history note: {msgid!r}")
    with translation.override("ru"):
        return _fill(msgid, params)


def note_shown(message: str) -> str:
    """A line of the bot's history in the active language: a line of NOTE_FORMS (in Russian, or in
    the English an actor wrote it in before lines were written in Russian) translated, roles by
    their labels in this language; anything else as it is."""
    for msgid in NOTE_FORMS:
        for language in ("ru", "en"):
            match = _note_pattern(msgid, language).fullmatch(message)
            if match is not None:
                return _fill(_(msgid), {name: _role_of(value, language) if name in ROLE_PARAMS else value
                                        for name, value in match.groupdict().items()})
    return message


def _fill(text: str, params: dict[str, str]) -> str:
    return text % {name: _role_label(value) if name in ROLE_PARAMS else value for name, value in params.items()}


@functools.cache  # a form's words in a language do not change while the process runs
def _note_pattern(msgid: str, language: str) -> re.Pattern[str]:
    """How the form reads when written in `language`: its words as they are, each role one of the
    roles' labels, any other parameter some text."""
    with translation.override(language):
        template = _(msgid)
        roles = "|".join(re.escape(str(label)) for label in Membership.Role.labels)
    return written_form(template, **dict.fromkeys(ROLE_PARAMS, roles))


def _role_of(label: str, language: str) -> str:
    with translation.override(language):
        return next(value for value, text in Membership.Role.choices if str(text) == label)


def history_note(*, bot: Bot, actor: Any, message: str, flag: int = CHANGE) -> None:
    """One line in the bot's history (the admin's «История» page of the bot); `message` from
    `note_written`."""
    if getattr(actor, "pk", None) is None:
        return  # a command-line change has no person to name; the command prints it instead
    LogEntry.objects.create(
        user_id=actor.pk, content_type=ContentType.objects.get_for_model(Bot), object_id=str(bot.pk),
        object_repr=str(bot)[:200], action_flag=flag, change_message=message,
    )


def bot_history(*, bot: Bot, limit: int = 50) -> list[LogEntry]:
    """The newest lines of the bot's history (`history_note` and the admin's own), newest first, each
    line's message in the active language (`lines_shown`)."""
    return lines_shown(list(
        LogEntry.objects.filter(content_type=ContentType.objects.get_for_model(Bot), object_id=str(bot.pk))
        .select_related("user").order_by("-action_time", "-pk")[:limit]
    ))


def lines_shown(lines: Any) -> Any:
    """Put each line's note in the active language for showing (`get_change_message` reads it; the
    admin's own lines, JSON that Django translates itself, stay). The rows are not saved again."""
    for line in lines:
        if line.change_message and not line.change_message.startswith("["):
            line.change_message = note_shown(line.change_message)
    return lines


def _role_label(role: str) -> str:
    return str(Membership.Role(role).label)


def _clean_email(email: Any) -> str:
    if not isinstance(email, str):
        raise MembersError(_("Укажите e-mail."))
    email = BaseUserManager.normalize_email(email.strip())
    try:
        validate_email(email)
    except ValidationError as exc:
        raise MembersError(_("«%(email)s» — не адрес e-mail.") % {"email": email[:100]}) from exc
    return email


def invitation_link(invitation: Invitation) -> str:
    token = signing.dumps({"i": invitation.pk}, salt=SALT, compress=True)
    return f"{settings.SPRAVKA_PUBLIC_URL}/accounts/invite/{token}/"


def invitation_create(*, bot: Bot, email: str, role: str, invited_by: Any) -> tuple[Invitation, str]:
    """Invite `email` as `role`: the e-mail with the link goes after commit. Returns the invitation
    and its link (shown to the owner too, in case the letter is lost). An earlier pending invitation
    of the same address to the same bot is revoked: only the newest link works."""
    email = _clean_email(email)
    if role not in Membership.Role.values:
        raise MembersError(_("Неизвестная роль: владелец или оператор."))
    current = Membership.objects.filter(bot=bot, user__username__iexact=email).first()
    if current is not None and current.role == role:
        raise MembersError(_("%(email)s уже %(role)s этого бота.") % {"email": email, "role": _role_label(role)})
    with transaction.atomic():
        now = timezone.now()
        Invitation.objects.filter(bot=bot, email__iexact=email, accepted_at__isnull=True,
                                  revoked_at__isnull=True).update(revoked_at=now)
        invitation = Invitation.objects.create(bot=bot, email=email, role=role, invited_by=invited_by)
        link = invitation_link(invitation)
        history_note(bot=bot, actor=invited_by, flag=ADDITION,
                     message=note_written(NOTE_INVITED, email=email, role=role))
        transaction.on_commit(lambda: _send(invitation, link))
    return invitation, link


def _send(invitation: Invitation, link: str) -> None:
    days = settings.INVITE_MAX_AGE_DAYS
    context = {"invitation": invitation, "link": link, "days": days, "role": _role_label(invitation.role)}
    try:
        send_mail(
            subject=_("Приглашение в бота «%(bot)s»") % {"bot": invitation.bot.name},
            message=render_to_string("registration/invite_email.txt", context),
            from_email=None, recipient_list=[invitation.email],
        )
    except OSError:  # the owner has the link on the page and can pass it on by hand
        log.exception("invitation %s: the e-mail to %s was not sent", invitation.pk, invitation.email)


def invitation_from_link(token: str) -> Invitation:
    """The pending invitation a link names, or MembersError saying why it does not work."""
    try:
        data = signing.loads(token, salt=SALT, max_age=settings.INVITE_MAX_AGE_DAYS * 86400)
    except signing.SignatureExpired as exc:
        raise MembersError(_("Срок приглашения истёк. Попросите владельца бота прислать новое.")) from exc
    except signing.BadSignature as exc:
        raise MembersError(_("Ссылка приглашения повреждена. Скопируйте её из письма целиком.")) from exc
    invitation = Invitation.objects.select_related("bot").filter(pk=data.get("i")).first()
    if invitation is None or invitation.revoked_at is not None:
        raise MembersError(_("Это приглашение отозвано. Попросите владельца бота прислать новое."))
    if invitation.accepted_at is not None:
        raise MembersError(_("По этому приглашению уже вошли. Войдите со своим паролем."))
    return invitation


def account_exists(email: str) -> bool:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.filter(username__iexact=email).exists()


def invitation_accept(*, invitation: Invitation, user: Any = None, password: str = "") -> Membership:
    """Accept as the signed-in `user` (whose login must be the invited address), or as a new account
    with `password`. An existing account that is not signed in is refused: sign in first."""
    with transaction.atomic():
        locked = Invitation.objects.select_for_update().select_related("bot").get(pk=invitation.pk)
        if not locked.pending:
            raise MembersError(_("Это приглашение уже использовано или отозвано."))
        signed_in = getattr(user, "is_authenticated", False)
        if signed_in and user.get_username().lower() != locked.email.lower():
            raise MembersError(
                _("Приглашение отправлено на %(email)s, а вы вошли как %(login)s. Выйдите и откройте ссылку снова.")
                % {"email": locked.email, "login": user.get_username()}
            )
        if not signed_in and account_exists(locked.email):
            raise MembersError(_("Учётная запись %(email)s уже есть: войдите в неё, затем откройте ссылку снова.")
                               % {"email": locked.email})
        if not signed_in and not password:
            raise MembersError(_("Придумайте пароль для новой учётной записи."))
        try:
            result = membership_add(bot=locked.bot, email=locked.email, role=locked.role, password=password)
        except ValidationError as exc:
            raise MembersError(" ".join(exc.messages)) from exc
        member = result.membership.user
        locked.accepted_at, locked.accepted_by = timezone.now(), member
        locked.save(update_fields=["accepted_at", "accepted_by"])
        history_note(bot=locked.bot, actor=member,
                     message=note_written(NOTE_ACCEPTED, email=locked.email, role=locked.role))
    return result.membership


def invitation_revoke(*, invitation: Invitation, actor: Any) -> None:
    if invitation.pending:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
        history_note(bot=invitation.bot, actor=actor, flag=DELETION,
                     message=note_written(NOTE_REVOKED, email=invitation.email))


def _other_owners(membership: Membership) -> bool:
    return Membership.objects.filter(bot_id=membership.bot_id, role=Membership.Role.OWNER).exclude(
        pk=membership.pk).exists()


def membership_role_set(*, membership: Membership, role: str, actor: Any) -> Membership:
    """Change a member's role; the last owner stays an owner."""
    if role not in Membership.Role.values:
        raise MembersError(_("Неизвестная роль: владелец или оператор."))
    if role == membership.role:
        return membership
    with transaction.atomic():
        Bot.objects.select_for_update().filter(pk=membership.bot_id).first()  # one change of owners at a time
        if membership.role == Membership.Role.OWNER and not _other_owners(membership):
            raise MembersError(_("Это единственный владелец бота: сначала назначьте другого владельца."))
        before = membership.role
        result = membership_add(bot=membership.bot, email=membership.user.get_username(), role=role)
        history_note(bot=membership.bot, actor=actor, message=note_written(
            NOTE_ROLE_CHANGED, email=membership.user.get_username(), before=before, after=role))
    return result.membership


def membership_remove_by(*, membership: Membership, actor: Any) -> None:
    """Remove a member (the account stays; it loses this bot); the last owner cannot be removed."""
    with transaction.atomic():
        Bot.objects.select_for_update().filter(pk=membership.bot_id).first()
        if membership.role == Membership.Role.OWNER and not _other_owners(membership):
            raise MembersError(_("Это единственный владелец бота: его нельзя удалить."))
        email, role, bot = membership.user.get_username(), membership.role, membership.bot
        membership_remove(membership=membership)
        history_note(bot=bot, actor=actor, flag=DELETION,
                     message=note_written(NOTE_REMOVED, email=email, role=role))
