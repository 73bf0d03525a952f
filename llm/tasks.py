"""Celery tasks of the llm layer. The worker finds them through this module (Celery autodiscovers
`llm.tasks`); each lives beside what it runs: the budget e-mail's in llm/budget.py."""

from __future__ import annotations

from llm.budget import budget_alert_send  # noqa: F401  (registered with the worker from here)
