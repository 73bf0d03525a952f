"""Every error of the API as problem details (RFC 9457, `application/problem+json`), mapped in one
place: validation, authentication, missing rows, throttling, the Knowledge layer's own errors.

{"type": "urn:spravka:problem:<slug>", "title": "…", "status": 400, "detail": "…", "instance": "/api/…",
 "errors": [{"pointer": "#/title", "detail": "…", "code": "max_length"}]}

`errors` comes with validation problems only: "pointer" (RFC 6901) names a field of the JSON body,
"parameter" a query parameter. Titles and details are in Russian, in English with
`Accept-Language: en`."""

from __future__ import annotations

from typing import Any, Final

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, JsonResponse
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error
from rest_framework.views import exception_handler as drf_exception_handler

from knowledge.exceptions import DocumentTooLarge, EntryConflict, EntryInvalid, KnowledgeError

CONTENT_TYPE: Final = "application/problem+json"
PREFIX: Final = "urn:spravka:problem:"

# status -> (type slug, title)
KINDS: Final[dict[int, tuple[str, Any]]] = {
    400: ("validation", _("Неверные данные")),
    401: ("unauthorized", _("Нужен действующий ключ API")),
    403: ("forbidden", _("Нет доступа")),
    404: ("not-found", _("Не найдено")),
    405: ("method-not-allowed", _("Метод не поддерживается")),
    406: ("not-acceptable", _("Формат ответа не поддерживается")),
    409: ("conflict", _("Конфликт с тем, что уже сохранено")),
    413: ("too-large", _("Слишком большой запрос")),
    415: ("unsupported-media-type", _("Неподдерживаемый тип данных")),
    429: ("throttled", _("Слишком много запросов")),
}


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = _("Тело запроса слишком большое.")
    default_code = "too_large"


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = _("Конфликт с тем, что уже сохранено.")
    default_code = "conflict"


def problem(status_code: int, detail: str, instance: str, **extra: Any) -> dict[str, Any]:
    slug, title = KINDS.get(status_code, ("error", _("Ошибка")))
    return {"type": PREFIX + slug, "title": str(title), "status": status_code, "detail": detail,
            "instance": instance, **extra}


def _flatten(detail: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str, str]]:
    """(field path, message, code) for every message of a DRF error tree."""
    if isinstance(detail, dict):
        return [item for key, value in detail.items() for item in _flatten(value, (*path, str(key)))]
    if isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            return [(path, str(item), str(getattr(item, "code", "invalid"))) for item in detail]
        return [item for index, value in enumerate(detail) for item in _flatten(value, (*path, str(index)))]
    return [(path, str(detail), str(getattr(detail, "code", "invalid")))]


def _errors(detail: Any, *, in_query: bool) -> list[dict[str, str]]:
    errors = []
    for path, message, code in _flatten(detail):
        names = [name for name in path if name != "non_field_errors"]
        where = {"parameter": ".".join(names)} if in_query else {
            "pointer": "#/" + "/".join(n.replace("~", "~0").replace("/", "~1") for n in names)
        }
        errors.append({**where, "detail": message, "code": code})
    return errors


def _summary(errors: list[dict[str, str]]) -> str:
    parts = []
    for error in errors[:5]:
        where = error.get("parameter") or error.get("pointer", "#/")[2:]
        parts.append(f"{where}: {error['detail']}" if where else error["detail"])
    more = len(errors) - len(parts)
    return "; ".join(parts) + (f" (+{more})" if more > 0 else "")


def _domain(exc: Exception) -> Exception:
    """Our own exceptions as the DRF ones that carry their status."""
    if isinstance(exc, EntryConflict):
        return Conflict(exc.message)
    if isinstance(exc, DocumentTooLarge):
        return PayloadTooLarge(exc.message)
    if isinstance(exc, EntryInvalid):
        return exceptions.ValidationError(dict(exc.problems.items()))
    if isinstance(exc, KnowledgeError):
        return exceptions.ValidationError({"non_field_errors": [exc.message]})
    if isinstance(exc, DjangoValidationError):
        return exceptions.ValidationError(as_serializer_error(exc))
    if isinstance(exc, Http404):
        return exceptions.NotFound()
    return exc


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    exc = _domain(exc)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # a bug: Django's 500, logged with its traceback
    request = context.get("request")
    instance = request.path if request is not None else ""
    extra: dict[str, Any] = {}
    if isinstance(exc, exceptions.ValidationError):
        errors = _errors(exc.detail, in_query=request is not None and request.method in ("GET", "HEAD"))
        extra["errors"] = errors
        detail = _summary(errors)
    else:
        raw = getattr(exc, "detail", "")
        detail = str(raw if not isinstance(raw, dict | list) else _summary(_errors(raw, in_query=False)))
    wait = getattr(exc, "wait", None)
    if isinstance(exc, exceptions.Throttled) and wait is not None:
        extra["retry_after"] = int(wait + 0.999)
    response.data = problem(response.status_code, detail, instance, **extra)
    response.content_type = CONTENT_TYPE
    return response


def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """Any address under /api/ that names no resource: the same problem as a missing row."""
    body = problem(404, str(exceptions.NotFound.default_detail), request.path)
    return JsonResponse(body, status=404, content_type=CONTENT_TYPE, json_dumps_params={"ensure_ascii": False})
