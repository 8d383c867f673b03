"""The loader of the built-in synthetic demo (no files)."""

from __future__ import annotations

from metaeval_core.data.loaders._common import LoadedData, LoaderFiles


def load_synthetic(files: LoaderFiles) -> LoadedData:
    """The built-in synthetic demo (no files). References: docs/methods.md sec. 9."""
    from metaeval_core.data.synthetic import synthetic_dataset

    ds = synthetic_dataset()
    return LoadedData(ds.systems, ds.inputs, ds.measures, ds.system_attributes, ds.notes, task=ds.task,
                      annotator_identity=ds.annotator_identity)
