"""What other systems and stored data rely on stays put when code moves between folders: every
model's app label and table, every management command, every URL name and every websocket route
recorded in tests/data/contracts.json (written from the layout before the apps moved out of
assistant/) still exists. New ones may be added; to record them, run
`python -m tests.test_contracts > tests/data/contracts.json`."""

from __future__ import annotations

import json
from functools import cache

import pytest

from tests.conftest import REPO

RECORDED = json.loads((REPO / "tests" / "data" / "contracts.json").read_text())


@cache
def current() -> dict[str, list[str]]:
    from django.apps import apps
    from django.core.management import get_commands
    from django.urls import URLPattern, URLResolver, get_resolver

    from assistant import routing

    def url_names(resolver: URLResolver, namespace: str = "") -> list[str]:
        found = []
        for pattern in resolver.url_patterns:
            if isinstance(pattern, URLResolver):
                found += url_names(pattern, f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace)
            elif isinstance(pattern, URLPattern) and pattern.name:
                found.append(namespace + pattern.name)
        return found

    return {
        "tables": sorted(f"{m._meta.label} {m._meta.db_table}" for m in apps.get_models(include_auto_created=True)),
        "commands": sorted(get_commands()),
        "urls": sorted(set(url_names(get_resolver()))),
        "sockets": sorted(str(route.pattern) for route in routing.websocket_urlpatterns),
    }


@pytest.mark.parametrize("kind", sorted(RECORDED))
def test_every_recorded_name_still_exists(kind):
    missing = sorted(set(RECORDED[kind]) - set(current()[kind]))
    assert not missing, f"{kind} gone or renamed (a contract: keep the old name): {missing}"


if __name__ == "__main__":
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assistant.settings")
    django.setup()
    print(json.dumps(current(), ensure_ascii=False, indent=1))
