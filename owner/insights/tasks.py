"""Celery tasks of the insights app, for the worker to register: they live in owner/insights/batch.py, next to
the rules they run and the places that queue them."""

from owner.insights.batch import batch_run_execute_task, sets_rerun_task

__all__ = ["batch_run_execute_task", "sets_rerun_task"]
