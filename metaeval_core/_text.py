"""Text that reaches a terminal or a log: control characters shown as escapes, passwords in URLs hidden; names
in natural order."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

# C0/C1 controls (ESC starts terminal escape sequences), DEL, and the Unicode line/paragraph separators and bidi
# overrides, which reorder or hide what follows them on a terminal.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]|\r(?!\n)")
_UNPRINTABLE_OR_NEWLINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: object, *, keep_newlines: bool = True) -> str:
    """``text`` with every control character written as a visible escape (``\\x1b``, ``\\u202e``).

    Names in a dataset and phrases from a server are data: printed raw, an escape sequence could recolour,
    retitle or rewrite the user's terminal. Tabs (and newlines, ``\r\n`` included, unless ``keep_newlines``
    is False) are kept."""
    pattern = _UNPRINTABLE if keep_newlines else _UNPRINTABLE_OR_NEWLINE
    return pattern.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def redact_url(url: object) -> str:
    """A URL as it may be shown: the password of ``user:password@host`` replaced by ``***`` (and unprintable
    characters escaped)."""
    text = str(url)
    try:
        parts = urlsplit(text)
    except ValueError:
        return printable(re.sub(r"//[^/@]*@", "//***@", text), keep_newlines=False)
    if "@" in parts.netloc:
        userinfo, host = parts.netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        shown = f"{user}:***@{host}" if ":" in userinfo else f"***@{host}"
        text = urlunsplit(parts._replace(netloc=shown))
    return printable(text, keep_newlines=False)


class PrintableStream:
    """A text stream whose writes go through :func:`printable`: wrapped around the command line's standard output
    and error, it covers every table, message and name the CLI prints (other attributes are the stream's)."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(printable(text))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def natural_key(text: str) -> tuple:
    """Sort key that orders embedded integers numerically (``M2`` < ``M10``)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)
