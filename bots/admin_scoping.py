"""Tenant and role scoping for the admin.

A membership is `owner` or `operator`. Each scoped admin says which roles reach its rows
(`bot_roles`): a bot's settings and knowledge are for its owners only; its
conversations are for its owners and operators, read-only. A user who owns bot A and operates bot B
sees A's settings and knowledge and the conversations of both; a superuser sees everything.

An owner's admin holds what an owner works with: settings, knowledge, catalog, conversations, leads,
review, Gaps, routes. The installation's journals (model calls and their billing lines, calls to the
messengers, invitation shows) and read-only copies of an owner page (the messenger connections) are
`SUPERUSERS_ONLY`: no role reaches them, so an owner's index and sidebar leave them out and their
URLs answer as for anyone without the permission.

What must stay true:
- Anything outside the user's bots is a 404, exactly like an id that does not exist: the change,
  delete and history views, simple-history's version views (they load rows by id without
  `get_queryset`), custom views and autocomplete answer the same for "theirs" and "missing".
- Filters, form choices and autocomplete list only the user's bots (in the admin's roles).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, ClassVar

from django.contrib import admin
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import models
from django.db.models import QuerySet
from django.forms import ModelChoiceField
from django.http import Http404, HttpRequest, HttpResponseRedirect
from simple_history.admin import SimpleHistoryAdmin

from bots.models import Bot
from bots.selectors import OWNER, bots_for_user, roles_by_bot

OWNER_ROLES: frozenset[str] = frozenset({OWNER})
SUPERUSERS_ONLY: frozenset[str] = frozenset()  # `bot_roles` of an admin no membership reaches


def _bot_ids(request: HttpRequest, roles: Collection[str] = OWNER_ROLES) -> set[int]:
    """The ids of the request user's bots in `roles`: one query per request for every set of roles
    (a superuser's are all bots)."""
    if getattr(request.user, "is_superuser", False):
        return set(bots_for_user(request.user, roles=roles).values_list("pk", flat=True))
    memberships: dict[int, str] | None = request.__dict__.get("_spravka_roles_by_bot")
    if memberships is None:
        memberships = request.__dict__["_spravka_roles_by_bot"] = roles_by_bot(request.user)
    return {bot_id for bot_id, role in memberships.items() if role in roles}


def may_access_bot(request: HttpRequest, bot_id: int | None, *, roles: Collection[str] = OWNER_ROLES) -> bool:
    """Whether the request user holds one of `roles` in the bot (owners only by default)."""
    if getattr(request.user, "is_superuser", False):
        return True
    return bot_id is not None and bot_id in _bot_ids(request, roles)


def owns_a_bot(request: HttpRequest) -> bool:
    """Whether the request user may change anything at all (owners' actions on shared pages)."""
    return bool(getattr(request.user, "is_superuser", False) or _bot_ids(request, OWNER_ROLES))


class ScopedRelatedFilter(admin.RelatedFieldListFilter):
    """A list filter on a bot (or on a row that belongs to a bot) offering only the user's bots:
    Django's own lists every row of the related table, i.e. every tenant's bot names."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> list[tuple[str, str | Any]]:
        related = field.related_model
        ids = _bot_ids(request, getattr(model_admin, "bot_roles", OWNER_ROLES))
        queryset = related._default_manager.all()
        if not getattr(request.user, "is_superuser", False):
            queryset = queryset.filter(pk__in=ids) if related is Bot else queryset.filter(bot__in=ids)
        ordering = self.field_admin_ordering(field, request, model_admin) or related._meta.ordering or ["pk"]
        return [(str(row.pk), str(row)) for row in queryset.order_by(*ordering)]


def _scoped_related(field: Any) -> bool:
    related = getattr(field, "related_model", None)
    return related is not None and (related is Bot or any(f.name == "bot" for f in related._meta.get_fields()))


class BotScopedAdmin(admin.ModelAdmin):
    """Rows reach their bot through `bot_field` (a path such as "bot" or "source__bot"); the
    memberships in `bot_roles` give access to them."""

    bot_field = "bot"
    bot_roles: ClassVar[frozenset[str]] = OWNER_ROLES

    def _obj_bot_id(self, obj: models.Model) -> int | None:
        target: Any = obj
        for part in self.bot_field.split("__"):
            target = getattr(target, part, None)
            if target is None:
                return None
        return int(target.pk)

    def _ids(self, request: HttpRequest) -> set[int]:
        return _bot_ids(request, self.bot_roles)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        if getattr(request.user, "is_superuser", False):
            return queryset
        return queryset.filter(**{f"{self.bot_field}__in": self._ids(request)})

    def _member(self, request: HttpRequest, obj: models.Model | None) -> bool:
        if not request.user.is_active or not getattr(request.user, "is_staff", False):
            return False
        if getattr(request.user, "is_superuser", False):
            return True
        if obj is None:
            return bool(self._ids(request))
        return may_access_bot(request, self._obj_bot_id(obj), roles=self.bot_roles)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._member(request, None)

    def has_view_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return self._member(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return self._member(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._member(request, None)

    def has_delete_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return self._member(request, obj)

    def _get_obj_does_not_exist_redirect(self, request: HttpRequest, opts: Any, object_id: str) -> HttpResponseRedirect:
        """Django answers a missing id with a redirect to the index and a message naming the id; a
        404 says the same for a missing row and for another tenant's, and nothing more."""
        raise Http404

    def get_list_filter(self, request: HttpRequest) -> list[Any]:
        filters: list[Any] = []
        for item in super().get_list_filter(request):
            field = self._field_or_none(item) if isinstance(item, str) else None
            filters.append((item, ScopedRelatedFilter) if field is not None and _scoped_related(field) else item)
        return filters

    def _field_or_none(self, name: str) -> Any:
        try:
            return self.model._meta.get_field(name)
        except FieldDoesNotExist:  # a path such as "source__kind" or a method name: not a relation of ours
            return None

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> ModelChoiceField | None:
        if not getattr(request.user, "is_superuser", False):
            if db_field.related_model is Bot:
                kwargs["queryset"] = Bot.objects.filter(pk__in=self._ids(request))
            elif hasattr(db_field.related_model, "bot"):
                kwargs["queryset"] = db_field.related_model._default_manager.filter(bot__in=self._ids(request))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class ScopedHistoryAdmin(SimpleHistoryAdmin, BotScopedAdmin):
    """simple-history's history list and version (revert) views, behind the same tenant gate:
    both load rows by id from the history table, where another tenant's ids are 403, not 404."""

    def history_view(self, request: HttpRequest, object_id: str, extra_context: Any = None) -> Any:
        self._gate(request, object_id)
        return super().history_view(request, object_id, extra_context)

    def history_form_view(
        self, request: HttpRequest, object_id: str, version_id: str, extra_context: Any = None
    ) -> Any:
        self._gate(request, object_id, version_id)
        return super().history_form_view(request, object_id, version_id, extra_context)

    def _gate(self, request: HttpRequest, object_id: str, version_id: str | None = None) -> None:
        """404 unless the row (live, or deleted and known by its history) and the version asked
        for belong to one of the user's bots in this admin's roles."""
        history = self.model.history
        try:
            live = self.model._default_manager.filter(pk=object_id).first()
            records = history.filter(**{self.model._meta.pk.attname: object_id})
            record = records.filter(history_id=version_id).first() if version_id else records.first()
        except (ValueError, ValidationError) as exc:  # a malformed id is missing too
            raise Http404 from exc
        if version_id is not None and record is None:
            raise Http404
        rows = [row for row in (live, record.instance if record else None) if row is not None]
        if not rows or not all(may_access_bot(request, self._obj_bot_id(row), roles=self.bot_roles) for row in rows):
            raise Http404
