"""The LLM-judges pages' layer (docs/methods.md sec. 18): cached wrappers on small keys (:mod:`.data`), frames
(:mod:`.tables`), pure plotly figures (:mod:`.figures`), sentences from the results (:mod:`.text`) and the pages' own
sidebar (:mod:`.widgets`). Import the modules themselves; this file re-exports nothing else."""
