"""Every admin URL, walked as every kind of account, and the differences checked.

Two tenants (bots A and B), each with one row of every registered model carrying a marker
string. Five accounts: owner of A, owner of B, operator of A (not staff, as `addmember` makes
one), the same operator with the staff flag forced on (roles must hold without relying on it),
and one account owning A while operating B. For every URL of `admin.site` (changelist, add,
change, delete, history, simple-history's version view, custom views such as the crawl progress,
and autocomplete for every relation) and for A's row, B's row and an id that does not exist:

- what an account may not see answers exactly like a missing id (status and body);
- no page an account can open contains the marker of a row it may not see (lists, filters,
  form choices, autocomplete, counts);
- the owners of A and of B see mirror images of each other.

A new model registered in the admin must be given rows here (`ROWS`) or be declared unscoped,
or this test fails: nothing reaches the admin without being walked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib import admin
from django.db import models
from django.urls import reverse
from django.utils import timezone

from behavior.models import InvitationRule, InvitationShow
from bots.admin_scoping import BotScopedAdmin
from bots.apikeys import api_key_create
from bots.models import ApiKey, Bot, Membership
from bots.services import membership_add
from chat import services as chat_services
from chat.models import Conversation, Lead, Message, WebhookDelivery
from crm.models import CrmDelivery
from feedback.models import Gap, Outcome
from inbox.models import CannedReply
from knowledge.catalog.models import CatalogImport, CatalogOffer, OrderEndpoint, OrderLookup
from knowledge.models import CrawlRun, Entry, Page, Source
from llm.journal import run_event_record
from llm.models import BotLLMSettings, RunEvent, Usage
from messengers.models import Connection, Delivery, MessengerChat
from review.models import Correction, ReviewItem
from routes.models import CustomerReview, ReviewReplySettings, RouteRun

pytestmark = pytest.mark.django_db

OWNER, OPERATOR = Membership.Role.OWNER, Membership.Role.OPERATOR
TENANTS = {"a": "zqalpha", "b": "zqbravo"}
# Registered models that belong to no bot: only a superuser may open them (403 for everyone here).
UNSCOPED = {"auth.user", "auth.group", "axes.accessattempt", "axes.accesslog", "axes.accessfailurelog"}
# Who is what: the role per tenant, and whether the account has the staff flag.
PERSONAS: dict[str, tuple[dict[str, str], bool | None]] = {
    "owner_a": ({"a": OWNER}, None),
    "owner_b": ({"b": OWNER}, None),
    "operator_a": ({"a": OPERATOR}, None),
    "operator_a_staff": ({"a": OPERATOR}, True),
    "owner_a_operator_b": ({"a": OWNER, "b": OPERATOR}, None),
}


def marker(tenant: str, model: type[models.Model]) -> str:
    return f"{TENANTS[tenant]}-{model._meta.model_name}"


def _bot(t: str, bot: Bot) -> Bot:
    bot.site_url = f"https://{marker(t, Bot)}.example/"
    bot.save(update_fields=["site_url"])
    return bot


def _source(t: str, bot: Bot) -> Source:
    return Source.objects.create(bot=bot, kind="site", url=f"https://{t}.example/", title=marker(t, Source))


def _crawlrun(t: str, bot: Bot) -> CrawlRun:
    return CrawlRun.objects.create(bot=bot, source=bot.sources.get(), status="done", message=marker(t, CrawlRun))


def _page(t: str, bot: Bot) -> Page:
    return Page.objects.create(bot=bot, source=bot.sources.get(), url=f"https://{t}.example/p/", title=marker(t, Page))


def _entry(t: str, bot: Bot) -> Entry:
    entry = Entry.objects.create(bot=bot, source=bot.sources.get(), kind="qa", title=marker(t, Entry), text="первая")
    entry.text = "вторая"
    entry.save()  # two versions: the version (revert) view has one to show
    return entry


def _usage(t: str, bot: Bot) -> Usage:
    return Usage.objects.create(bot=bot, route="chat", purpose=marker(t, Usage), provider="anthropic", model="m")


def _runevent(t: str, bot: Bot) -> RunEvent:
    run_event_record(bot_id=bot.pk, kind="llm_call", ok=True, purpose=marker(t, RunEvent))
    return RunEvent.objects.get(bot=bot)


def _llm_settings(t: str, bot: Bot) -> BotLLMSettings:
    return BotLLMSettings.objects.create(bot=bot, fast_model=marker(t, BotLLMSettings))


def _conversation(t: str, bot: Bot) -> Conversation:
    return chat_services.conversation_open(bot=bot, visitor_id=f"v-{marker(t, Conversation)}")


def _lead(t: str, bot: Bot) -> Lead:
    return Lead.objects.create(
        bot=bot, conversation=bot.conversations.get(), visitor_id=f"v-{t}", name=marker(t, Lead),
        email=f"visitor@{t}.example", consent_text="Согласен", consent_policy_url=f"https://{t}.example/privacy/",
        consented_at=timezone.now(),
    )


def _webhook(t: str, bot: Bot) -> WebhookDelivery:
    return WebhookDelivery.objects.create(bot=bot, event=marker(t, WebhookDelivery), url=f"https://{t}.example/hook",
                                          payload={"event": "handoff.waiting"})


def _review_item(t: str, bot: Bot) -> ReviewItem:
    message = Message.objects.create(conversation=bot.conversations.get(), bot=bot, role="bot", text="Ответ бота.")
    return ReviewItem.objects.create(bot=bot, message=message, reasons=["low_confidence"],
                                     question=marker(t, ReviewItem), answer="Ответ бота.", answered_at=timezone.now())


def _correction(t: str, bot: Bot) -> Correction:
    return Correction.objects.create(bot=bot, item=bot.review_items.get(), entry=bot.entries.get(), kind="correction",
                                     origin="review", question=marker(t, Correction), answer="Исправленный ответ.")


def _gap(t: str, bot: Bot) -> Gap:
    now = timezone.now()
    return Gap.objects.create(bot=bot, title=marker(t, Gap), count=1, first_seen=now, last_seen=now)


def _customer_review(t: str, bot: Bot) -> CustomerReview:
    return CustomerReview.objects.create(bot=bot, author=marker(t, CustomerReview), rating=5, text="Спасибо!",
                                         written_on=timezone.now().date(), source="WB", fingerprint=t)


def _review_reply_settings(t: str, bot: Bot) -> ReviewReplySettings:
    return ReviewReplySettings.objects.create(bot=bot, banned_words=marker(t, ReviewReplySettings))


def _route_run(t: str, bot: Bot) -> RouteRun:
    run = RouteRun.objects.create(bot=bot, route="review_reply", review=bot.customer_reviews.get(),
                                  status=RouteRun.Status.WAITING, draft=marker(t, RouteRun))
    return run


def _apikey(t: str, bot: Bot) -> ApiKey:
    return api_key_create(bot=bot, name=marker(t, ApiKey))[0]


def _outcome(t: str, bot: Bot) -> Outcome:
    return Outcome.objects.create(bot=bot, conversation=bot.conversations.get(), kind="answered",
                                  started_at=timezone.now())


def _order_endpoint(t: str, bot: Bot) -> OrderEndpoint:
    return OrderEndpoint.objects.create(bot=bot, url_template=f"https://{marker(t, OrderEndpoint)}.example/{{number}}")


def _order_lookup(t: str, bot: Bot) -> OrderLookup:
    return OrderLookup.objects.create(bot=bot, number=marker(t, OrderLookup), result="found")


def _catalog_offer(t: str, bot: Bot) -> CatalogOffer:
    return CatalogOffer.objects.create(bot=bot, source=bot.sources.get(), offer_id="1", name=marker(t, CatalogOffer),
                                       price=1, content_hash="x")


def _catalog_import(t: str, bot: Bot) -> CatalogImport:
    return CatalogImport.objects.create(bot=bot, source=bot.sources.get(), status="done",
                                        message=marker(t, CatalogImport))


def _invitation_rule(t: str, bot: Bot) -> InvitationRule:
    return InvitationRule.objects.create(bot=bot, name=marker(t, InvitationRule), text="Нужна помощь?")


def _invitation_show(t: str, bot: Bot) -> InvitationShow:
    return InvitationShow.objects.create(bot=bot, rule=bot.invitation_rules.get(), visitor_id=marker(t, InvitationShow))


def _canned_reply(t: str, bot: Bot) -> CannedReply:
    return CannedReply.objects.create(bot=bot, shortcut=f"{t}walk", title=marker(t, CannedReply), text="Здравствуйте!")


def _connection(t: str, bot: Bot) -> Connection:
    return Connection.objects.create(bot=bot, kind=Connection.Kind.TELEGRAM, account_name=marker(t, Connection),
                                     token_hint="…walk")


def _delivery(t: str, bot: Bot) -> Delivery:
    connection = bot.messenger_connections.get()
    chat = MessengerChat.objects.create(connection=connection, chat_id=f"{t}-chat", name=f"{t} chat")
    return Delivery.objects.create(connection=connection, chat=chat, key=f"u:{t}", method="sendMessage",
                                   params={"chat_id": chat.chat_id, "text": "..."}, error=marker(t, Delivery),
                                   status=Delivery.Status.FAILED)


def _crm_delivery(t: str, bot: Bot) -> CrmDelivery:
    return CrmDelivery.objects.create(bot=bot, lead=bot.leads.get(), kind="amocrm", account=f"https://{t}.amocrm.ru",
                                      error=marker(t, CrmDelivery), status=CrmDelivery.Status.FAILED)


# In order: later rows need earlier ones (a crawl run needs its source).
ROWS: dict[type[models.Model], Callable[[str, Bot], models.Model]] = {
    Bot: _bot, Source: _source, CrawlRun: _crawlrun, Page: _page, Entry: _entry, Usage: _usage,
    RunEvent: _runevent, BotLLMSettings: _llm_settings, Conversation: _conversation, Lead: _lead,
    WebhookDelivery: _webhook, ReviewItem: _review_item, Correction: _correction, Gap: _gap, Outcome: _outcome,
    CustomerReview: _customer_review, ReviewReplySettings: _review_reply_settings, RouteRun: _route_run,
    ApiKey: _apikey,
    OrderEndpoint: _order_endpoint, OrderLookup: _order_lookup, CatalogOffer: _catalog_offer,
    CatalogImport: _catalog_import,
    InvitationRule: _invitation_rule, InvitationShow: _invitation_show, CannedReply: _canned_reply,
    Connection: _connection, Delivery: _delivery, CrmDelivery: _crm_delivery,
}


@dataclass
class Seen:
    status: int
    body: str
    location: str
    listed: frozenset[int] | None = None  # changelist: the pks on the page
    counts: tuple[int, int] | None = None  # changelist: (results, total)
    choices: tuple[str, ...] = ()  # changelist: every filter choice offered

    def same_as(self, other: Seen, ids: list[str]) -> bool:
        """Equal once the ids in the URL and the page are put aside."""
        def plain(text: str) -> str:
            for value in ids:
                text = re.sub(rf"(?<![0-9]){re.escape(value)}(?![0-9])", "ID", text)
            return text

        return (self.status, plain(self.body), plain(self.location)) == (other.status, plain(other.body),
                                                                        plain(other.location))


@pytest.fixture
def world(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    bots = {t: Bot.objects.create(name=f"Магазин {name}", slug=name) for t, name in TENANTS.items()}
    rows: dict[type[models.Model], dict[str, models.Model]] = {}
    for model, make in ROWS.items():
        rows[model] = {t: make(t, bot) for t, bot in bots.items()}
    users = {}
    for name, (roles, staff) in PERSONAS.items():
        email = f"{name}@walk.example"
        for tenant, role in roles.items():
            user = membership_add(bot=bots[tenant], email=email, role=role, password="pw-walk-12345").membership.user
        if staff is not None:
            user.is_staff = staff
            user.save(update_fields=["is_staff"])
        users[name] = user
    return bots, rows, users


def may_see(persona: str, model: type[models.Model], tenant: str) -> bool:
    roles, staff = PERSONAS[persona]
    is_staff = staff if staff is not None else OWNER in roles.values()
    model_admin = admin.site._registry[model]
    return bool(is_staff and roles.get(tenant) in getattr(model_admin, "bot_roles", ()))


def observe(client: Any, url: str) -> Seen:
    response = client.get(url)
    body = response.content.decode()
    seen = Seen(status=response.status_code, body=body, location=response.get("Location", ""))
    context = getattr(response, "context", None)
    if response.status_code == 200 and context is not None and "cl" in context:
        cl = context["cl"]
        seen.listed = frozenset(obj.pk for obj in cl.result_list)
        seen.counts = (cl.result_count, cl.full_result_count)
        seen.choices = tuple(str(choice.get("display")) for spec in cl.filter_specs for choice in spec.choices(cl))
    return seen


def object_urls(model: type[models.Model], rows: dict[str, models.Model]) -> dict[str, dict[str, str]]:
    """Every admin URL of `model` that takes a row: name -> {"a": url, "b": url, "missing": url}."""
    model_admin = admin.site._registry[model]
    missing = (model._default_manager.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1000
    urls: dict[str, dict[str, str]] = {}
    for pattern in model_admin.get_urls():
        if not pattern.name:  # the catch-all that redirects <id>/ to <id>/change/
            continue
        groups = pattern.pattern.regex.groups
        route = f"admin:{pattern.name}"
        if groups == 1:
            urls[pattern.name] = {t: reverse(route, args=[row.pk]) for t, row in rows.items()}
            urls[pattern.name]["missing"] = reverse(route, args=[missing])
        elif groups == 2:  # simple-history's version view: <id>/history/<version>/
            versions = {t: row.history.earliest().history_id for t, row in rows.items()}  # type: ignore[attr-defined]
            urls[pattern.name] = {t: reverse(route, args=[rows[t].pk, versions[t]]) for t in rows}
            urls[pattern.name]["missing"] = reverse(route, args=[missing, max(versions.values()) + 1000])
            urls[pattern.name]["a_with_b_version"] = reverse(route, args=[rows["a"].pk, versions["b"]])
    return urls


def list_urls(model: type[models.Model]) -> list[str]:
    info = model._meta.app_label, model._meta.model_name
    return [reverse("admin:{}_{}_changelist".format(*info)), reverse("admin:{}_{}_add".format(*info))]


def autocomplete_urls() -> list[str]:
    """Autocomplete for every relation of every model whose target has an admin with search:
    Django answers for any such field, whether or not a form declares it."""
    urls = []
    for model in admin.site._registry:
        for field in model._meta.get_fields():
            target = getattr(field, "related_model", None)
            if not field.concrete or target not in admin.site._registry:
                continue
            if not admin.site._registry[target].search_fields:
                continue
            query = f"app_label={model._meta.app_label}&model_name={model._meta.model_name}&field_name={field.name}"
            urls.append(f"{reverse('admin:autocomplete')}?{query}&term=")
    return urls


def test_every_registered_model_is_walked():
    labels = {model._meta.label_lower for model in admin.site._registry}
    walked = {model._meta.label_lower for model in ROWS}
    assert labels - walked == UNSCOPED, "give new admin models rows in ROWS (or declare them UNSCOPED)"
    for model in ROWS:
        assert isinstance(admin.site._registry[model], BotScopedAdmin), f"{model} is not scoped by bot"


@pytest.mark.parametrize("persona", list(PERSONAS))
def test_every_admin_url_as_every_account(client, world, persona):
    _bots, rows, users = world
    client.force_login(users[persona])
    roles, _staff = PERSONAS[persona]
    bodies: list[str] = []
    walked = 0

    for model in admin.site._registry:
        scoped = model in rows
        for url in list_urls(model):
            seen = observe(client, url)
            bodies.append(seen.body + seen.location)
            walked += 1
            if not users[persona].is_staff:
                assert seen.status == 302 and "/admin/login/" in seen.location, url
            elif not scoped or not any(may_see(persona, model, t) for t in TENANTS):
                assert seen.status == 403, (url, seen.status)
            elif url.endswith("/add/"):
                assert seen.status in (200, 403), url
            else:
                visible = {rows[model][t].pk for t in TENANTS if may_see(persona, model, t)}
                assert seen.status == 200, url
                if seen.listed is not None:  # a page of its own in place of the list (the review queue): markers only
                    assert seen.listed == visible, (url, seen.listed, visible)
                    assert seen.counts == (len(visible), len(visible)), (url, seen.counts)

        if not scoped:
            continue
        for name, targets in object_urls(model, rows[model]).items():
            numbers = {number for url in targets.values() for number in re.findall(r"\d+", url)}
            ids = sorted(numbers, key=len, reverse=True)
            missing = observe(client, targets["missing"])
            for target, url in targets.items():
                seen = observe(client, url)
                bodies.append(seen.body + seen.location)
                walked += 1
                tenant = target if target in TENANTS else None
                if tenant and may_see(persona, model, tenant):
                    # 403: read-only views; 405: endpoints that only take POST
                    assert seen.status in (200, 403, 405), (name, target, seen.status)
                    continue
                # Not theirs: exactly what a missing id gets, nothing to tell the two apart.
                assert seen.same_as(missing, ids), (name, target, seen.status, missing.status)
                assert seen.status in (302, 403, 404, 405), (name, target, seen.status)
                if users[persona].is_staff and any(may_see(persona, model, t) for t in TENANTS):
                    assert seen.status in (403, 404, 405), (name, target)

    for url in autocomplete_urls():
        seen = observe(client, url)
        bodies.append(seen.body)
        walked += 1
        if seen.status == 200:
            texts = {item["text"] for item in json.loads(seen.body)["results"]}
            assert all(TENANTS[t] not in text for text in texts for t in TENANTS if t not in roles), (url, texts)

    # Nothing of a row this account may not see appears on any page it could open.
    page = "\n".join(bodies)
    for model in rows:
        for tenant in TENANTS:
            if not may_see(persona, model, tenant):
                assert marker(tenant, model) not in page, f"{persona} saw {marker(tenant, model)}"
    for tenant, name in TENANTS.items():
        if tenant not in roles:
            assert name not in page, f"{persona} saw the name of a bot it has no role in"
    assert walked > 100


def test_the_two_owners_see_mirror_images(client, world):
    """Owner A on A's rows and owner B on B's rows: the same status on every URL, the same counts."""
    _bots, rows, users = world
    views: dict[str, dict[str, tuple[int, Any]]] = {"a": {}, "b": {}}
    for tenant, persona in (("a", "owner_a"), ("b", "owner_b")):
        client.force_login(users[persona])
        for model in rows:
            for url in list_urls(model):
                seen = observe(client, url)
                views[tenant][url] = (seen.status, seen.counts)
            for name, targets in object_urls(model, rows[model]).items():
                other = "b" if tenant == "a" else "a"
                for side, target in (("own", tenant), ("other", other), ("missing", "missing")):
                    views[tenant][f"{name}:{side}"] = (observe(client, targets[target]).status, None)
    assert views["a"] == views["b"]


def test_filters_offer_only_the_accounts_own_bots(client, world):
    _bots, _rows, users = world
    other = Bot.objects.create(name="Магазин zqcharlie", slug="zqcharlie")
    Membership.objects.create(bot=other, user=users["owner_a"], role=OWNER)
    client.force_login(users["owner_a"])
    for model in (Conversation, Entry, Source, Page, CrawlRun):
        seen = observe(client, list_urls(model)[0])
        bot_choices = [choice for choice in seen.choices if choice.startswith("Магазин")]
        assert sorted(bot_choices) == ["Магазин zqalpha", "Магазин zqcharlie"], (model, seen.choices)
