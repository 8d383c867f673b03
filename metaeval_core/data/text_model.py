"""The texts behind a dataset's cells, as one object (docs/methods.md sec. 19.6).

Kept apart from :mod:`metaeval_core.data.texts` (which reads the built-in datasets' text files through the
registry) so that the upload readers can build one without importing the registry.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class ExampleTexts:
    """The texts behind a dataset's cells, aligned to its systems and inputs (all of them, judged or not).

    Attributes
    ----------
    dataset_id : str
    systems, inputs : tuple of str
        The dataset's own order.
    outputs : numpy.ndarray of object, shape (N, M)
        System i's output on input j (a summary, a translation, a story); ``None`` where there is none.
    sources : tuple of str
        Each input's source (document, source sentence, prompt); ``''`` when unknown.
    references : tuple of str
        Each input's reference; ``''`` when unknown.
    files : str
        The file(s) the texts were read from.
    """

    dataset_id: str
    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: np.ndarray
    sources: tuple[str, ...]
    references: tuple[str, ...]
    files: str = ""

    def __post_init__(self) -> None:
        shape = (len(self.systems), len(self.inputs))
        if self.outputs.shape != shape:
            raise ValueError(f"outputs must have shape {shape} (systems x inputs); got {self.outputs.shape}")
        for name in ("sources", "references"):
            if len(getattr(self, name)) != len(self.inputs):
                raise ValueError(f"{name} must hold one text per input ({len(self.inputs)}); "
                                 f"got {len(getattr(self, name))}")

    def output(self, system: int, input_index: int) -> str | None:
        value = self.outputs[system, input_index]
        return None if value is None else str(value)
