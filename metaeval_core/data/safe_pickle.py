"""A restricted unpickler for the pickles shipped with built-in datasets.

``pickle.load`` runs whatever callable a pickle names, so an untrusted pickle
can execute arbitrary code. The REALSumm score pickles only need plain Python
containers and numbers plus numpy's scalar and dtype reconstructors; this
module resolves exactly those names and refuses every other global *before*
anything is called.

Allowed globals:

* ``numpy.core.multiarray.scalar`` and ``numpy._core.multiarray.scalar`` (the
  numpy scalar reconstructor; both spellings resolve to the numpy 2 function,
  without importing the deprecated ``numpy.core`` shim);
* ``numpy.dtype``;
* the plain builtin value types ``bool``, ``int``, ``float``, ``complex``,
  ``str``, ``bytes``, ``bytearray``, ``list``, ``tuple``, ``dict``, ``set`` and
  ``frozenset`` (also under their Python 2 module name ``__builtin__``, as
  protocols 0-2 write them). No builtin function (``eval``, ``exec``,
  ``getattr``, ``__import__``, ...) is allowed; neither is ``_codecs.encode``,
  so ``bytes`` pickled with protocols 0-2 are refused.

Persistent ids and extension codes are refused as well.

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

SAFE_BUILTINS: frozenset[str] = frozenset(
    {"bool", "int", "float", "complex", "str", "bytes", "bytearray", "list", "tuple", "dict", "set", "frozenset"}
)
NUMPY_GLOBALS: frozenset[tuple[str, str]] = frozenset(
    {
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
        ("numpy", "dtype"),
    }
)


class UnsafePickleError(DatasetError):
    """A pickle names a global that the restricted unpickler does not allow."""


def _numpy_scalar():
    from numpy._core.multiarray import scalar  # numpy >= 2; never the deprecated numpy.core shim

    return scalar


class RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that resolves only numpy scalar/dtype reconstructors and plain builtins.

    References
    ----------
    Python documentation, ``pickle`` -- "Restricting Globals".
    """

    def __init__(self, file: BinaryIO, *, source: str = "<pickle>") -> None:
        super().__init__(file)
        self._source = source

    def find_class(self, module: str, name: str) -> Any:  # noqa: D102 - pickle hook
        if module in ("builtins", "__builtin__") and name in SAFE_BUILTINS:  # __builtin__: protocols 0-2
            import builtins

            return getattr(builtins, name)
        if (module, name) in NUMPY_GLOBALS:
            return np.dtype if name == "dtype" else _numpy_scalar()
        raise UnsafePickleError(
            f"{self._source}: refused to unpickle the global {module}.{name}; this restricted unpickler only "
            "allows numpy scalars/dtypes and plain builtin types (the file may be corrupt or malicious)"
        )

    def persistent_load(self, pid: Any) -> Any:  # noqa: D102 - pickle hook
        raise UnsafePickleError(f"{self._source}: refused a persistent id in the pickle")


def safe_load(source: str | os.PathLike | bytes | BinaryIO) -> Any:
    """Unpickle ``source`` allowing only numpy scalars/dtypes and plain builtins.

    Parameters
    ----------
    source : str, os.PathLike, bytes or binary file object
        A path to a pickle file, the pickle's bytes, or an open binary file.

    Returns
    -------
    object
        The unpickled object (dicts, lists, numbers, strings, numpy scalars).

    Raises
    ------
    UnsafePickleError
        The pickle references any other global (for example ``os.system``);
        nothing it names is ever called.
    DatasetError
        The file is missing or is not a valid pickle.

    References
    ----------
    Python documentation, ``pickle`` -- "Restricting Globals".
    """
    stream, label, close = _validate_source(source)
    try:
        return RestrictedUnpickler(stream, source=label).load()
    except UnsafePickleError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError) as error:
        raise DatasetError(f"{label}: not a valid pickle ({type(error).__name__}: {error})") from error
    finally:
        if close:
            stream.close()


def _validate_source(source: object) -> tuple[BinaryIO, str, bool]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return io.BytesIO(bytes(source)), "<pickle bytes>", True
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            return open(path, "rb"), str(path), True
        except OSError as error:
            raise DatasetError(f"{path}: cannot open the pickle ({error.strerror or error})") from error
    if hasattr(source, "read"):
        return source, getattr(source, "name", "<pickle stream>"), False  # type: ignore[return-value]
    raise TypeError(f"source must be a path, bytes or a binary file object; got {type(source).__name__}")
