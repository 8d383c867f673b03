"""What a dataset's outputs and inputs are called: the words pages and reports use for its design.

A summarization dataset scores summaries of documents, a story-generation dataset stories written from
prompts, a translation test set translations of source segments; an upload is told nothing and gets the
generic "outputs" and "inputs". Sentences that name units take them from here instead of assuming one
dataset's design.

References: docs/methods.md sec. 0.1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

Task = Literal["", "summarization", "story-generation", "translation"]
AnnotatorIdentity = Literal["persons", "positions", "unknown"]
ANNOTATOR_IDENTITIES: tuple[str, ...] = ("persons", "positions", "unknown")


@dataclass(frozen=True)
class TaskVocabulary:
    """The task's name and the singular/plural words for a scored output and for an input.

    References: docs/methods.md sec. 0.1.
    """

    task: str
    output: str
    outputs: str
    input: str
    inputs: str

    def count(self, n: int, unit: Literal["output", "input"] = "output") -> str:
        """``n`` with the unit in the right number: '1 summary', '1,600 summaries', '96 prompts'."""
        singular, plural = (self.output, self.outputs) if unit == "output" else (self.input, self.inputs)
        return f"{n:,} {singular if n == 1 else plural}"


TASKS: Mapping[str, TaskVocabulary] = {
    "": TaskVocabulary("", "output", "outputs", "input", "inputs"),
    "summarization": TaskVocabulary("summarization", "summary", "summaries", "document", "documents"),
    "story-generation": TaskVocabulary("story generation", "story", "stories", "prompt", "prompts"),
    "translation": TaskVocabulary("machine translation", "translation", "translations", "segment", "segments"),
}


def vocabulary(task: str) -> TaskVocabulary:
    """The vocabulary of ``task`` (a key of :data:`TASKS`; ``''`` is the generic one)."""
    try:
        return TASKS[task]
    except KeyError:
        raise ValueError(f"task must be one of {', '.join(repr(t) for t in TASKS)}; got {task!r}") from None
