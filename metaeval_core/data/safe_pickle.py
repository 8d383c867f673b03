"""A restricted unpickler for the pickles shipped with built-in datasets.

``pickle.load`` runs whatever callable a pickle names, so an untrusted pickle
can execute arbitrary code; even numpy's own reconstructors are unsafe with
forged arguments (a ``numpy.dtype`` given forged fields through the BUILD step
crashes Python when used, and a huge dtype or memo index allocates gigabytes).
This module allows exactly what the built-in pickles use and checks every
argument before anything is called.

What the built-in pickles need (inspected with ``pickletools``; protocol 3):

* REALSumm ``scores_dicts/abs.pkl`` and ``ext.pkl``: dicts, strings, floats and
  ints, plus numpy float scalars written as ``numpy.core.multiarray.scalar(dtype,
  8 bytes)`` with ``numpy.dtype('f8', False, True)`` and its BUILD state
  ``(3, '<', None, None, None, -1, -1, 0)``; nothing else.
* SummEval ``bartscore/data.pkl``: dicts, lists, strings and floats only (no global).

So the only globals resolved are ``numpy.dtype`` and the scalar reconstructor
(``numpy.core.multiarray.scalar`` or ``numpy._core.multiarray.scalar``), each
replaced by a checking wrapper:

* ``dtype(code, align, copy)``: ``code`` one of the plain numeric codes
  (``b1``, ``i1``..``i8``, ``u1``..``u8``, ``f2``..``f8``); nothing structured,
  no subarray, no void or string type of any size;
* BUILD only on a dtype made that way, and only with the canonical state of that
  type (byte order ``<``, ``>``, ``=`` or ``|``; no names, fields, sizes or flags of
  the pickle's choosing); BUILD on anything else is refused;
* ``scalar(dtype, data)``: a dtype made that way and ``bytes`` of exactly its itemsize.

No builtin is resolved (not even value types), persistent ids and extension
codes are refused, and the pickle is read whole (at most :data:`MAX_PICKLE_BYTES`)
by Python's pure-Python unpickler, whose memo is a dict (a forged memo index does
not allocate) and whose reads never exceed the data. Every failure is a
:class:`~metaeval_core.data.dataset.DatasetError`.

References: Python documentation, ``pickle`` -- "Restricting Globals".
"""

from __future__ import annotations

import io
import os
import pickle
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from metaeval_core.data.dataset import DatasetError

# The pickles are checked against their sha256 before loading; this bound only keeps a corrupt or hostile
# file (the largest real one is 1.2 MB) from being read into memory whole.
MAX_PICKLE_BYTES = 64 * 2**20

NUMPY_GLOBALS: frozenset[tuple[str, str]] = frozenset(
    {
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
        ("numpy", "dtype"),
    }
)
DTYPE_CODES: frozenset[str] = frozenset(
    {"b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"}
)
_BYTE_ORDERS = frozenset("<>=|")


class UnsafePickleError(DatasetError):
    """A pickle names a global, or gives a reconstructor arguments, that the restricted unpickler refuses."""


def _numpy_scalar():
    from numpy._core.multiarray import scalar  # numpy >= 2; never the deprecated numpy.core shim

    return scalar


class RestrictedUnpickler(pickle._Unpickler):  # the pure-Python unpickler: its BUILD step can be checked
    """An unpickler that builds only plain values, simple numeric dtypes and their scalars.

    References
    ----------
    Python documentation, ``pickle`` -- "Restricting Globals".
    """

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file: BinaryIO, *, source: str = "<pickle>") -> None:
        super().__init__(file)
        self._source = source
        self._dtypes: dict[int, np.dtype] = {}  # id -> every dtype this load made (kept alive, so ids stay unique)

    def _refuse(self, what: str) -> UnsafePickleError:
        return UnsafePickleError(f"{self._source}: refused {what}; this restricted unpickler only allows what the "
                                 "built-in datasets' pickles need (the file may be corrupt or malicious)")

    def find_class(self, module: str, name: str) -> Any:  # noqa: D102 - pickle hook
        if (module, name) in NUMPY_GLOBALS:
            return self._dtype if name == "dtype" else self._scalar
        raise self._refuse(f"to unpickle the global {module}.{name}")

    def persistent_load(self, pid: Any) -> Any:  # noqa: D102 - pickle hook
        raise self._refuse("a persistent id in the pickle")

    def _dtype(self, code=None, align=False, copy=True, *extra) -> np.dtype:
        if extra or not isinstance(code, str) or code not in DTYPE_CODES or align not in (0, 1) or copy not in (0, 1):
            raise self._refuse(f"numpy.dtype{(code, align, copy, *extra)!r:.80} (only plain numeric codes "
                               f"{', '.join(sorted(DTYPE_CODES))})")
        made = np.dtype(code, align=bool(align), copy=True)  # a copy: BUILD must never touch numpy's own float64
        self._dtypes[id(made)] = made
        return made

    def _scalar(self, dtype=None, data=None, *extra) -> Any:
        if extra or id(dtype) not in self._dtypes or self._dtypes[id(dtype)] is not dtype:
            raise self._refuse("a numpy scalar whose dtype the pickle did not build with numpy.dtype")
        if not isinstance(data, bytes) or len(data) != dtype.itemsize:
            raise self._refuse(f"a numpy {dtype} scalar from {type(data).__name__} data that is not "
                               f"{dtype.itemsize} bytes")
        return _numpy_scalar()(dtype, data)

    def load_build(self) -> None:
        state = self.stack.pop()
        inst = self.stack[-1]
        if id(inst) not in self._dtypes or self._dtypes[id(inst)] is not inst:
            raise self._refuse(f"the BUILD step on a {type(inst).__name__} (allowed on numpy dtypes only)")
        canonical = inst.__reduce__()[2]
        if (not isinstance(state, tuple) or len(state) != len(canonical) or state[0] != canonical[0]
                or not isinstance(state[1], str) or state[1] not in _BYTE_ORDERS
                or (state[1] == "|") != (canonical[1] == "|") or state[2:] != canonical[2:]):
            raise self._refuse(f"a forged numpy dtype state {state!r:.120}")
        inst.__setstate__(state)  # only the byte order can differ from the canonical state

    dispatch[pickle.BUILD[0]] = load_build


def safe_load(source: str | os.PathLike | bytes | BinaryIO) -> Any:
    """Unpickle ``source`` allowing only plain values, simple numeric dtypes and their scalars.

    Parameters
    ----------
    source : str, os.PathLike, bytes or binary file object
        A path to a pickle file, the pickle's bytes, or an open binary file (at most
        :data:`MAX_PICKLE_BYTES`).

    Returns
    -------
    object
        The unpickled object (dicts, lists, numbers, strings, numpy scalars and dtypes).

    Raises
    ------
    UnsafePickleError
        The pickle references any other global (for example ``os.system``), a dtype
        that is not a plain numeric one, a forged dtype state, or a BUILD step on
        anything but a dtype; nothing it names is ever called with unchecked arguments.
    DatasetError
        The file is missing, too large, or not a valid pickle.

    References
    ----------
    Python documentation, ``pickle`` -- "Restricting Globals".
    """
    data, label = _read_source(source)
    try:
        return RestrictedUnpickler(io.BytesIO(data), source=label).load()
    except UnsafePickleError:
        raise
    except RecursionError as error:
        raise DatasetError(f"{label}: not a valid pickle (nested too deeply)") from error
    except MemoryError as error:
        raise DatasetError(f"{label}: not a valid pickle (it asks for more memory than there is)") from error
    except Exception as error:  # noqa: BLE001 - any failure of a corrupt pickle is a dataset error
        detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise DatasetError(f"{label}: not a valid pickle ({type(error).__name__}: {detail:.200})") from error


def _read_source(source: object) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, label = bytes(source), "<pickle bytes>"
    elif isinstance(source, (str, os.PathLike)):
        path, label = Path(source), str(source)
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_PICKLE_BYTES + 1)
        except OSError as error:
            raise DatasetError(f"{path}: cannot open the pickle ({error.strerror or error})") from error
    elif hasattr(source, "read"):
        label = str(getattr(source, "name", "<pickle stream>"))
        data = source.read(MAX_PICKLE_BYTES + 1)
        if not isinstance(data, bytes):
            raise TypeError(f"source must be opened in binary mode; read() gave {type(data).__name__}")
    else:
        raise TypeError(f"source must be a path, bytes or a binary file object; got {type(source).__name__}")
    if len(data) > MAX_PICKLE_BYTES:
        raise DatasetError(f"{label}: the pickle is larger than {MAX_PICKLE_BYTES // 2**20} MB, the limit")
    return data, label
