"""The loader of built-in mt-metrics-eval test sets (WMT22 zh-en; WMT23 en-de, he-en, zh-en, one language pair at a
time): :func:`metaeval_core.data.mtme.read_mtme` on the registry's files, with WMT's conventions.

References: docs/methods.md sec. 0.5-0.6; the dataset's ``SOURCE.md`` in the data mirror.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.loaders._common import LoadedData, LoaderFiles, _validate_files


def load_mtme(files: LoaderFiles) -> LoadedData:
    """One language pair of an mt-metrics-eval test set listed file by file in the registry.

    The registry's ``options`` give ``lp`` (``zh-en``), ``test_set`` (``wmt22``) and optionally ``level``
    (``seg``, or ``sys`` for the files' own system scores); the test-set folder is
    the one holding ``documents/<lp>.docs``. Every file of the folder that the reader uses is a required,
    sha256-checked file of the entry. The result is the segment view of :func:`read_mtme` with its WMT
    conventions (standard reference never a system, gold, primary metrics, pool ``all``).

    References
    ----------
    google-research/mt-metrics-eval README (file organization); Freitag et al. (WMT 2022); docs/methods.md
    sec. 0.5-0.6.
    """
    from metaeval_core.data.mtme import read_mtme

    lp = str(files.options.get("lp", "")) if isinstance(files, LoaderFiles) else ""
    files = _validate_files(files, "mtme", (f"documents/{lp}.docs",))
    docs = next(path for rel, path in files.required.items() if rel.endswith(f"documents/{lp}.docs"))
    root = Path(docs).parent.parent
    test_set = str(files.options.get("test_set", root.name))
    if root.name != test_set:
        raise DatasetError(f"loader 'mtme': the test-set folder {root} is not named {test_set!r}")
    level = str(files.options.get("level", "seg"))  # 'sys' for a test set with several pairs (registry _for_lp)
    measures = str(files.options.get("measures", "all"))  # 'gold-and-primary': WMT's task suites' reading
    ds = read_mtme(root, lp=lp, level=level, dataset_id=f"mtme:{test_set}/{lp}",
                   measures=measures)  # type: ignore[arg-type]
    # An optional file of its pair (registry option lp_files): without it the pair loads without mqm.sxs.
    sxs = [path for rel, path in {**files.required, **files.optional}.items()
           if rel.endswith(".3ratingsPerSegment.tsv.tar.gz")]
    full = level == "seg" and measures == "all"  # the side-by-side MQM is neither the gold nor a metric
    if sxs and full:  # WMT23 en-de: Google's side-by-side MQM, 3 raters per segment (mqm.sxs)
        from metaeval_core.data.mtme import with_sxs_mqm

        ds = with_sxs_mqm(ds, sxs[0], root / "sources" / f"{lp}.txt")
    elif full:
        expected = [path for path in dict(files.options.get("lp_files", {}) or {}).get(lp, ())
                    if str(path).endswith(".3ratingsPerSegment.tsv.tar.gz")]
        if expected:  # said, so that a user looking for mqm.sxs learns why it is not there
            ds = replace(ds, notes=(*ds.notes, (
                f"Human measure mqm.sxs (Google's side-by-side MQM) is not loaded: its file {expected[0]} is not in "
                "the data directory (`metaeval fetch --dataset wmt23` fetches it).")))
    return LoadedData(ds.systems, ds.inputs, ds.measures, ds.system_attributes, ds.notes,
                      default_systems=ds.default_systems, input_attributes=ds.input_attributes,
                      conventions=ds.conventions, task=ds.task, annotator_identity=ds.annotator_identity)
