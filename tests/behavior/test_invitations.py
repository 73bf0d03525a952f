"""Proactive invitations: which rule fits a page view (pattern, seconds, returning, mobile, once per
N days, never over an open conversation), shows recorded once, conversions counted per rule."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from behavior import invitations
from behavior.invitations import Visit, invitation_for, pattern_matches
from behavior.models import InvitationRule, InvitationShow
from chat import services

pytestmark = pytest.mark.django_db

PHONE_UA = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148"
DESKTOP_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120 Safari/537.36"


@pytest.mark.parametrize(("pattern", "url", "fits"), [
    ("", "https://shop.example/anything", True),
    ("/catalog/*", "https://shop.example/catalog/vacuums/", True),
    ("/catalog/*", "https://shop.example/delivery/", False),
    ("*/vacuums/*", "https://shop.example/catalog/vacuums/v1/", True),
    ("/", "https://shop.example", True),
    ("/cart/", "https://shop.example/cart/?step=2", True),
    ("/search/?q=*", "https://shop.example/search/?q=lamp", True),
    ("https://shop.example/sale/*", "https://shop.example/sale/x", True),
    ("https://shop.example/sale/*", "https://other.example/sale/x", False),
    ("/a.b/", "https://shop.example/aXb/", False),  # a dot is a dot, not "any character"
])
def test_patterns(pattern, url, fits):
    assert pattern_matches(pattern, url) is fits


def _rule(bot, **fields):
    return InvitationRule.objects.create(bot=bot, name=fields.pop("name", "Пылесосы"),
                                         text=fields.pop("text", "Подобрать пылесос?"), **fields)


def test_the_first_fitting_rule_in_the_owners_order(bot):
    _rule(bot, name="catalog", url_pattern="/catalog/*")
    second = _rule(bot, name="any")
    first = invitation_for(bot=bot, visitor_id="v1", visit=Visit("https://s.example/catalog/x/"))
    assert first is not None and first.name == "catalog"
    assert invitation_for(bot=bot, visitor_id="v1", visit=Visit("https://s.example/delivery/")) == second


def test_never_over_an_open_conversation_and_switched_off_rules_never(bot):
    _rule(bot)
    assert invitation_for(bot=bot, visitor_id="v1", visit=Visit("https://s.example/", open_conversation=True)) is None
    InvitationRule.objects.update(enabled=False)
    assert invitation_for(bot=bot, visitor_id="v1", visit=Visit("https://s.example/")) is None


def test_mobile_and_returning_conditions(bot):
    rule = _rule(bot, show_on_mobile=False, returning_only=True)
    assert invitation_for(bot=bot, visitor_id="v1", visit=Visit("https://s.example/", DESKTOP_UA)) is None
    visit = Visit("https://s.example/", DESKTOP_UA, returning=True)
    assert invitation_for(bot=bot, visitor_id="v1", visit=visit) == rule
    phone = Visit("https://s.example/", PHONE_UA, returning=True)
    assert invitation_for(bot=bot, visitor_id="v1", visit=phone) is None


def test_once_per_visitor_per_n_days(bot):
    rule = _rule(bot, once_per_days=3)
    visit = Visit("https://s.example/")
    first = invitations.invitation_show_record(bot=bot, visitor_id="v1", rule_id=rule.pk)
    again = invitations.invitation_show_record(bot=bot, visitor_id="v1", rule_id=rule.pk)  # a second tab
    assert first is not None and again == first and InvitationShow.objects.count() == 1
    assert invitation_for(bot=bot, visitor_id="v1", visit=visit) is None
    assert invitation_for(bot=bot, visitor_id="v2", visit=visit) == rule  # another visitor
    InvitationShow.objects.update(shown_at=timezone.now() - timedelta(days=4))
    assert invitation_for(bot=bot, visitor_id="v1", visit=visit) == rule


def test_another_bots_rule_is_no_rule(bot, other_bot):
    theirs = _rule(other_bot)
    assert invitations.invitation_show_record(bot=bot, visitor_id="v1", rule_id=theirs.pk) is None
    assert not InvitationShow.objects.exists()
    assert invitation_for(bot=bot, visitor_id="v1", visit=Visit("https://s.example/")) is None


def test_returning_is_read_from_redis():
    visitor = f"v_{uuid.uuid4().hex}"
    assert invitations.visitor_returning(bot_id=1, visitor_id=visitor) is False  # first seen now
    assert invitations.visitor_returning(bot_id=1, visitor_id=visitor) is False  # same visit
    cache.set(f"behavior:seen:1:{visitor}", int(timezone.now().timestamp()) - 3600, 60)
    assert invitations.visitor_returning(bot_id=1, visitor_id=visitor) is True


def test_a_conversation_after_a_show_converts_it_once(bot):
    rule = _rule(bot)
    invitations.invitation_show_record(bot=bot, visitor_id="v_conv1", rule_id=rule.pk)
    conversation = services.conversation_open(bot=bot, visitor_id="v_conv1")
    services.message_receive(conversation=conversation, text="Здравствуйте", client_msg_id="c1")
    services.message_receive(conversation=conversation, text="Спасибо", client_msg_id="c2")
    show = InvitationShow.objects.get()
    assert show.conversation_id == conversation.pk and show.converted_at is not None
    counts = invitations.invitation_counts([rule])[rule.pk]
    assert (counts.shown, counts.converted, counts.rate) == (1, 1, 1.0)


def test_a_conversation_without_a_show_converts_nothing(bot):
    rule = _rule(bot)
    invitations.invitation_show_record(bot=bot, visitor_id="v_other", rule_id=rule.pk)
    conversation = services.conversation_open(bot=bot, visitor_id="v_conv2")
    services.message_receive(conversation=conversation, text="Здравствуйте", client_msg_id="c1")
    assert InvitationShow.objects.get().converted_at is None
