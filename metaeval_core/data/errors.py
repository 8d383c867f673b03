"""The data floor's error, below every module that raises it (the dataset, its selection grammar, the readers)."""

from __future__ import annotations


class DatasetError(ValueError):
    """A dataset (built-in or uploaded) cannot be built or queried as asked."""
