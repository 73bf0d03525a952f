"""The declarations' system check: a route that breaks the limits in docs/architecture.md ("Routes with
a judge") stops `manage.py check`, `runserver` and `migrate` with the reasons, before any run could start."""

from __future__ import annotations

from typing import Any

from django.core import checks

from routes.declarations import ROUTES, Route, route_problems


def route_errors(routes: dict[str, Route]) -> list[checks.CheckMessage]:
    return [
        checks.Error(problem.message, obj=f"route:{name}", id=f"routes.{problem.code}")
        for name, route in routes.items() for problem in route_problems(route)
    ]


@checks.register("routes")
def declared_routes(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    return route_errors(ROUTES)
