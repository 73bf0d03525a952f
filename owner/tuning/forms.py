"""What the voice and experiment forms post, turned into the services' plain data. No validation
here: the services validate (voice/services.py, feedback/experiments.py) and name every
problem; these only collect the fields."""

from __future__ import annotations

import re
from typing import Any

from django.http import QueryDict

from voice import effective, sliders

_WORD_SEPARATORS = re.compile(r"[\n,;]+")


def voice_data(post: QueryDict) -> dict[str, Any]:
    terms, replacements = post.getlist("term"), post.getlist("replacement")
    width = max(len(terms), len(replacements))
    terms += [""] * (width - len(terms))
    replacements += [""] * (width - len(replacements))
    return {
        "sliders": {s.key: post.get(f"slider_{s.key}", "") for s in sliders.SLIDERS},
        "conditions": post.get("conditions", ""),
        "preferred": list(zip(terms, replacements, strict=True)),
        "forbidden": [w for w in _WORD_SEPARATORS.split(post.get("forbidden", "")) if w.strip()],
        "replies": {
            language: {key: post.get(f"reply_{language}_{key}", "") for key in effective.CANNED_KEYS}
            for language in effective.LANGUAGES
        },
    }


def revision(post: QueryDict) -> int:
    raw = post.get("revision", "0")
    return int(raw) if raw.isdigit() else -1


def experiment_data(post: QueryDict) -> dict[str, Any]:
    return {
        "name": post.get("name", ""),
        "kind": post.get("kind", ""),
        "share": post.get("share", "50"),
        "metric": post.get("metric", ""),
        "variant": {
            "sliders": {s.key: post.get(f"variant_{s.key}", "") for s in sliders.SLIDERS},
            "conditions": post.get("variant_conditions", ""),
            "match_threshold": post.get("variant_match_threshold", ""),
            "confidence_threshold": post.get("variant_confidence_threshold", ""),
        },
    }
