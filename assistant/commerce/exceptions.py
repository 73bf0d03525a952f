"""Errors of the commerce layer, worded for a shop owner (they are shown in the admin and by commands)."""

from __future__ import annotations


class SecretsUnreadable(Exception):
    """The stored header token cannot be decrypted: the key changed since it was saved."""
