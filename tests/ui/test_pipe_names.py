"""A metric name with '|' stays in its cell of the Overview leaderboard (escaped once, not twice; issue 28)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from metaeval_ui import tables


def pipe_names(seed: int, k: int = 6) -> list[str]:
    rng = np.random.default_rng(seed)
    pieces = ["|", "0.999", "\\", "|x|", "a", " | ", "*", "`"]
    return [f"m{j}" + "".join(rng.choice(pieces, size=int(rng.integers(1, 5)))) for j in range(k)]


def cells(line: str) -> list[str]:
    """A markdown table row's cells: split on pipes not escaped by an odd number of backslashes."""
    return [c.strip() for c in re.split(r"(?<!\\)(?:\\\\)*\|", line.strip())[1:-1]]


@pytest.mark.parametrize("seed", range(4))
def test_every_row_keeps_its_four_cells_and_its_numbers(seed):
    names = pipe_names(seed)
    board = pd.DataFrame({"metric": names, "estimate": np.linspace(0.9, 0.4, len(names)),
                          "low": np.linspace(0.8, 0.3, len(names)), "high": np.linspace(0.95, 0.5, len(names)),
                          "cluster": np.arange(1, len(names) + 1), "kind": "metric"})
    lines = tables.leaderboard_markdown(board, "kendall").splitlines()[2:]
    for line, row in zip(lines, board.itertuples()):
        rank, _name, estimate, interval = (c.strip("*") for c in cells(line))
        assert estimate == f"{row.estimate:.3f}" and interval == f"[{row.low:.3f}, {row.high:.3f}]"
