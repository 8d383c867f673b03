"""Turn expected failures (bad data, bad choices) into readable messages, never a traceback.

Every message may hold user-provided text (file names, measure names), so it is escaped for Streamlit's
markdown before display; raw HTML is never enabled.
"""

from __future__ import annotations

import contextlib
import re
from typing import Iterator

import streamlit as st

from metaeval_core.data.dataset import DatasetError

# Characters with a meaning in Streamlit markdown (incl. $ for LaTeX, : for emoji/material shortcodes).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=])")

EXPECTED = (DatasetError, ValueError, KeyError, FileNotFoundError, OSError)


def escape_markdown(text: object) -> str:
    """``text`` with every markdown-significant character backslash-escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


def message_of(error: BaseException) -> str:
    """A one-line human message for an expected error (KeyError reprs lose their quotes)."""
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    text = str(error).strip()
    return text or type(error).__name__


def show_error(error: BaseException | str, *, prefix: str = "") -> None:
    """Display an error message (escaped) in the current container."""
    text = error if isinstance(error, str) else message_of(error)
    kind = getattr(error, "kind", "")
    head = f"{prefix}: " if prefix else ""
    suffix = f" ({kind})" if kind else ""
    st.error(escape_markdown(f"{head}{text}{suffix}"), icon=":material/error:")


@contextlib.contextmanager
def guard(prefix: str = "", *, stop: bool = False) -> Iterator[None]:
    """Run a block; show DatasetError/ValueError (and other expected errors) as ``st.error``.

    With ``stop=True`` the page stops after the message (nothing below depends on a failed step).
    """
    try:
        yield
    except EXPECTED as error:  # expected, user-facing failures
        show_error(error, prefix=prefix)
        if stop:
            st.stop()
