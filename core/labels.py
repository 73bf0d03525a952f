"""How a visitor is named to the people who read conversations (owners and operators): the inbox's
list and transcript, the admin's conversations and contacts, the review queue, a messenger
operator's notice. `chat.models.Conversation.visitor_label` calls this; so does every place that
names a visitor without a conversation row at hand (an invitation shown, a conversation frame).

What must stay true:
- a visitor is never named by their machine id («v_5c1f42df…») or by a bare number («Посетитель #1»):
  the name they left, else when they started writing (and from which messenger), in the reader's
  language and the server's time zone, as every other time on these pages;
- the label is plain text: the pages escape it like any other visitor text.
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.translation import get_language
from django.utils.translation import gettext as _


def started_at(moment: datetime) -> str:
    """«2 декабря, 12:04» / «Dec 2, 12:04 PM»; the year too when it is not this one. The clock is the
    inbox's (templates and inbox.js write 09:05 / 09:05 AM)."""
    local = timezone.localtime(moment) if timezone.is_aware(moment) else moment
    english = (get_language() or "ru").startswith("en")
    day = "M j" if english else "j E"
    if local.year != timezone.localtime().year:
        day += ", Y" if english else " Y"
    return f"{date_format(local, day)}, {date_format(local, 'h:i A' if english else 'H:i')}"


def visitor_label(*, name: str = "", channel_name: str = "", started: datetime | None = None) -> str:
    """The name the visitor left; else «Посетитель, 2 декабря, 12:04», or «Посетитель из Telegram, …»
    for a messenger (`channel_name`: the channel as a person reads it, empty for the site's widget)."""
    name = " ".join((name or "").split())
    if name:
        return name
    if started is None:
        return _("Посетитель из %(channel)s") % {"channel": channel_name} if channel_name else _("Посетитель")
    when = started_at(started)
    if channel_name:
        return _("Посетитель из %(channel)s, %(when)s") % {"channel": channel_name, "when": when}
    return _("Посетитель, %(when)s") % {"when": when}
