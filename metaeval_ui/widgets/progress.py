"""Progress bars with a time estimate for long computations (issue 16: anything over about a second).

A computation runs inside the page script, so it is cancelled the Streamlit way: changing any control
reruns the page and abandons the run, and the app menu's Stop ends it; the bar says so once the run is
slow enough for that to matter.
"""

from __future__ import annotations

import time
from typing import Callable

# Below this much elapsed time the estimate is mostly noise, and the run is nearly done anyway.
_ESTIMATE_AFTER_S = 1.0


def eta_text(fraction: float, elapsed: float, what: str) -> str:
    """'40% of 435 pairs · about 3 s left (change a setting or press Stop to cancel)'."""
    fraction = min(max(fraction, 0.0), 1.0)
    text = f"{fraction:.0%} of {what}"
    if elapsed < _ESTIMATE_AFTER_S or fraction <= 0.0 or fraction >= 1.0:
        return text
    left = elapsed * (1.0 - fraction) / fraction
    left_text = f"{left:.0f} s" if left < 90 else f"{left / 60:.0f} min"
    return f"{text} · about {left_text} left (change a setting or press Stop to cancel)"


def progress_callback(bar, what: str) -> Callable[[float], None]:
    """A ``progress(fraction)`` callback updating a ``st.progress`` bar with :func:`eta_text`."""
    start = time.perf_counter()

    def update(fraction: float) -> None:
        bar.progress(min(max(float(fraction), 0.0), 1.0), text=eta_text(fraction, time.perf_counter() - start, what))

    return update
