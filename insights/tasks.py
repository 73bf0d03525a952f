"""Celery tasks of the insights app, for the worker to register: they live in insights/batch.py, next to
the rules they run and the places that queue them."""

from insights.batch import batch_run_execute_task, sets_rerun_task

__all__ = ["batch_run_execute_task", "sets_rerun_task"]
