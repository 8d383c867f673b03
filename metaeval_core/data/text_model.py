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


def combined_texts(first: ExampleTexts | None, second: ExampleTexts | None) -> ExampleTexts | None:
    """The texts of a merge: ``first``'s systems and inputs, then ``second``'s new ones; a text ``first`` has wins,
    ``second`` fills the texts ``first`` lacks (as a merge fills cells). None when neither has texts."""
    if first is None or second is None:
        return first if second is None else second
    systems = tuple(dict.fromkeys((*first.systems, *second.systems)))
    inputs = tuple(dict.fromkeys((*first.inputs, *second.inputs)))
    outputs = np.full((len(systems), len(inputs)), None, dtype=object)
    row = {s: i for i, s in enumerate(systems)}
    col = {j: k for k, j in enumerate(inputs)}
    for texts in (second, first):  # first last: its texts win
        rows = np.array([row[s] for s in texts.systems], dtype=np.int64)
        cols = np.array([col[j] for j in texts.inputs], dtype=np.int64)
        given = np.not_equal(texts.outputs, None)
        block = outputs[np.ix_(rows, cols)]
        block[given] = texts.outputs[given]
        outputs[np.ix_(rows, cols)] = block

    def per_input(name: str) -> tuple[str, ...]:
        out = [""] * len(inputs)
        for texts in (second, first):
            for j, text in zip(texts.inputs, getattr(texts, name)):
                if text:
                    out[col[j]] = text
        return tuple(out)

    files = " + ".join(f for f in (first.files, second.files) if f)
    return ExampleTexts(first.dataset_id, systems, inputs, outputs, per_input("sources"), per_input("references"),
                        files)
