"""Loaders of the built-in pairwise-verdict datasets (PandaLM, LLMBar) and :func:`load_pairwise`.

Each loader reads the upstream files unchanged (registry entries of kind ``pairwise`` in
``data/registry.json``, fetched and verified by :mod:`metaeval_core.data.registry`) and returns a
:class:`~metaeval_core.judges.model.PairwiseData`. A verdict that is not A, B or a tie (PandaLM's 'garbage',
an LLMBar winner that could not be parsed) is kept as :data:`~metaeval_core.judges.model.INVALID` and counted
in the notes.

References: docs/methods.md sec. 18; the data mirror's ``pandalm/SOURCE.md`` and ``llmbar/SOURCE.md``.
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Mapping

import numpy as np

from metaeval_core.data.dataset import DatasetError
from metaeval_core.data.loaders._common import LoaderFiles, read_json
from metaeval_core.judges.model import A, B, INVALID, MISSING, ORDERS, TIE, PairwiseData, Rater

# Bump when a loader's output changes for the same input files (part of PairwiseData.version).
PAIRWISE_LOADER_VERSION = "1"

PANDALM_TESTSET = "pandalm/testset-v1.json"
PANDALM_JUDGES: Mapping[str, tuple[str, str]] = {  # judge id -> (file, result key)
    "GPT-3.5-turbo": ("pandalm/gpt-3.5-turbo-testset-v1.json", "gpt_result"),
    "PandaLM-7B": ("pandalm/pandalm-7b-testset-v1.json", "pandalm_result"),
}
PANDALM_ANNOTATORS: tuple[str, ...] = ("annotator1", "annotator2", "annotator3")
PANDALM_PAIR_SET = "PandaLM test set"
# PandaLM's codes (SOURCE.md): 0 = tie, 1 = response1 (A) better, 2 = response2 (B) better; GPT's 'Tie'/'garbage'.
_PANDALM_CODES: Mapping[str, int] = {"0": TIE, "1": A, "2": B, "tie": TIE}

LLMBAR_PAIR_SETS: Mapping[str, tuple[str, str]] = {  # pair set -> (folder under Dataset/, group)
    "Natural": ("LLMBar/Natural", "LLMBar natural"),
    "Neighbor": ("LLMBar/Adversarial/Neighbor", "LLMBar adversarial"),
    "GPTInst": ("LLMBar/Adversarial/GPTInst", "LLMBar adversarial"),
    "GPTOut": ("LLMBar/Adversarial/GPTOut", "LLMBar adversarial"),
    "Manual": ("LLMBar/Adversarial/Manual", "LLMBar adversarial"),
    "MT-Bench": ("Processed/MT-Bench", "other benchmarks"),
    "FairEval": ("Processed/FairEval", "other benchmarks"),
    "LLMEval^2": ("Processed/LLMEval^2", "other benchmarks"),
}
LLMBAR_EVALUATORS: tuple[str, ...] = ("GPT-4", "ChatGPT", "ChatGPT-0301", "PaLM2", "LLaMA2", "Falcon")
LLMBAR_STRATEGIES: tuple[str, ...] = ("Vanilla_NoRules", "Vanilla", "CoT", "Metrics_Reference", "Rating")
LLMBAR_GOLD = "label"
_LLMBAR_ORDERS = ("swap = False", "swap = True")


def _fail(path: Path | str, what: str) -> DatasetError:
    return DatasetError(f"{path}: {what}")


def _pandalm_code(value: Any) -> int:
    key = str(value).strip().lower()
    return _PANDALM_CODES.get(key, INVALID)


def _file(files: LoaderFiles, path: str) -> Path:
    try:
        return Path(files.required[path])
    except KeyError:
        raise DatasetError(f"the loader needs the file {path!r}; the registry entry does not list it") from None


def _records(path: Path) -> list[dict]:
    raw = read_json(path)
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        raise _fail(path, "expected a JSON list of objects")
    return raw


def load_pandalm(files: LoaderFiles) -> PairwiseData:
    """PandaLM's human-annotated test set and two judges' verdicts (one presentation order).

    Items are the 999 test instructions (id = upstream ``idx``), A = ``response1``, B = ``response2``, the
    systems from ``cmp_key``; raters the three annotators (human) and GPT-3.5-turbo and PandaLM-7B (judges).
    Item attributes: ``system_pair`` and ``task`` (``motivation_app``).

    References
    ----------
    Wang et al. (ICLR 2024), PandaLM; docs/methods.md sec. 18.
    """
    path = _file(files, PANDALM_TESTSET)
    test = _records(path)
    n = len(test)
    ids = [str(r.get("idx")) for r in test]
    if len(set(ids)) != n:
        raise _fail(path, "item ids ('idx') must be unique")
    position = {i: k for k, i in enumerate(ids)}
    raters = [Rater(a, "human", label=f"annotator {a[-1]}") for a in PANDALM_ANNOTATORS]
    raters += [Rater(j, "judge") for j in PANDALM_JUDGES]
    verdicts = np.full((n, len(raters), 2), MISSING, dtype=np.int8)
    system_a, system_b, pairs, inputs = [], [], [], []
    for k, record in enumerate(test):
        for r, key in enumerate(PANDALM_ANNOTATORS):
            if key not in record:
                raise _fail(path, f"item {ids[k]}: no {key!r}")
            verdicts[k, r, 0] = _pandalm_code(record[key])
        systems = str(record.get("cmp_key", "")).split("_")
        if len(systems) != 2:
            raise _fail(path, f"item {ids[k]}: cmp_key {record.get('cmp_key')!r} is not '<system A>_<system B>'")
        system_a.append(systems[0])
        system_b.append(systems[1])
        pairs.append(" vs ".join(sorted(systems)))
        extra = str(record.get("input") or "").strip()
        inputs.append(str(record.get("instruction", "")) + (f"\n\n{extra}" if extra else ""))
    notes = []
    for r, (judge, (name, key)) in enumerate(PANDALM_JUDGES.items(), start=len(PANDALM_ANNOTATORS)):
        jpath = _file(files, name)
        seen = set()
        for record in _records(jpath):
            idx = str(record.get("idx"))
            if idx not in position or idx in seen:
                raise _fail(jpath, f"item {idx!r} is not in {PANDALM_TESTSET} or appears twice")
            seen.add(idx)
            verdicts[position[idx], r, 0] = _pandalm_code(record.get(key))
        if len(seen) != n:
            raise _fail(jpath, f"{n - len(seen)} of the {n} items have no verdict")
        invalid = int((verdicts[:, r, 0] == INVALID).sum())
        if invalid:
            notes.append(f"{judge}: {invalid} verdicts could not be parsed (upstream 'garbage') and are kept as "
                         "invalid.")
    notes.append("Each pair was judged in one presentation order (A = response1 shown first): positional "
                 "consistency cannot be measured.")
    return PairwiseData(
        id="pandalm", items=tuple(ids), pair_sets=(PANDALM_PAIR_SET,), pair_set=np.zeros(n, np.int64),
        raters=tuple(raters), verdicts=verdicts,
        inputs=tuple(inputs), output_a=tuple(str(r.get("response1", "")) for r in test),
        output_b=tuple(str(r.get("response2", "")) for r in test),
        system_a=tuple(system_a), system_b=tuple(system_b),
        attributes={"system_pair": tuple(pairs), "task": tuple(str(r.get("motivation_app", "")) for r in test)},
        notes=tuple(notes),
    )


def _llmbar_winner(value: Any) -> int:
    return {"1": A, "2": B}.get(str(value).strip() if value is not None else "", INVALID)


def _llmbar_score(value: Any) -> float:
    first = value[0] if isinstance(value, list) and value else value
    try:
        number = float(str(first).strip())
    except ValueError:
        return math.nan
    return number if math.isfinite(number) else math.nan


def load_llmbar(files: LoaderFiles) -> PairwiseData:
    """LLMBar's eight pair sets with their labels and the evaluators' verdicts in both orders.

    Items are ``<pair set>/<k>`` (``k`` the 0-based position in the set's ``dataset.json``); A = ``output_1``;
    raters the label (gold: the authors' on LLMBar, the source benchmark's human preference on MT-Bench,
    FairEval, LLMEval^2) and one judge per ``<evaluator>/<strategy>`` with a verdict per order (``swap =
    False`` is the original order). Rating strategies also give scores (``score_1``, ``score_2``; NaN when
    unparseable). A judge absent from a pair set has no verdict (missing) there. Item attribute: ``group``.

    References
    ----------
    Zeng et al. (ICLR 2024), LLMBar; docs/methods.md sec. 18.
    """
    base = "llmbar/Dataset"
    items, pair_set, inputs, out_a, out_b, gold, groups = [], [], [], [], [], [], []
    found: dict[tuple[str, str], dict[str, Path]] = {}
    folders = {folder: name for name, (folder, _) in LLMBAR_PAIR_SETS.items()}
    for path in files.required:
        parts = PurePosixPath(path).relative_to(base).parts if path.startswith(base + "/") else ()
        if len(parts) >= 5 and parts[-1] == "result.json" and parts[-4] == "evaluators":
            name = folders.get("/".join(parts[:-4]))
            if name is not None:
                found.setdefault((parts[-3], parts[-2]), {})[name] = Path(files.required[path])
    offsets = {}
    for s, (name, (folder, group)) in enumerate(LLMBAR_PAIR_SETS.items()):
        path = _file(files, f"{base}/{folder}/dataset.json")
        records = _records(path)
        offsets[name] = (len(items), records, path)
        for k, record in enumerate(records):
            label = str(record.get("label", "")).strip()
            if label not in ("1", "2"):
                raise _fail(path, f"record {k}: label must be 1 or 2; got {record.get('label')!r}")
            items.append(f"{name}/{k}")
            pair_set.append(s)
            inputs.append(str(record.get("input", "")))
            out_a.append(str(record.get("output_1", "")))
            out_b.append(str(record.get("output_2", "")))
            gold.append(A if label == "1" else B)
            groups.append(group)
    judges = sorted(found, key=lambda es: (LLMBAR_EVALUATORS.index(es[0]) if es[0] in LLMBAR_EVALUATORS else 99,
                                           LLMBAR_STRATEGIES.index(es[1]) if es[1] in LLMBAR_STRATEGIES else 99, es))
    raters = [Rater(LLMBAR_GOLD, "gold", label="label (gold / human preference)")]
    raters += [Rater(f"{e}/{s}", "judge", attributes={"evaluator": e, "strategy": s}) for e, s in judges]
    n = len(items)
    verdicts = np.full((n, len(raters), 2), MISSING, dtype=np.int8)
    verdicts[:, 0, 0] = gold
    scores = np.full((n, len(raters), 2), np.nan)
    for r, key in enumerate(judges, start=1):
        for name, rpath in found[key].items():
            start, records, dpath = offsets[name]
            results = _records(rpath)
            if len(results) != len(records):
                raise _fail(rpath, f"{len(results)} results for the {len(records)} pairs of {dpath}")
            for k, (result, record) in enumerate(zip(results, records)):
                if (result.get("input"), result.get("output_1"), result.get("output_2")) != (
                        record.get("input"), record.get("output_1"), record.get("output_2")):
                    raise _fail(rpath, f"record {k} is not the pair of {dpath} at the same position")
                outcome = result.get("results")
                outcome = outcome[-1] if isinstance(outcome, list) and outcome else None
                if not isinstance(outcome, dict):
                    raise _fail(rpath, f"record {k}: 'results' must be a list ending in the verdicts")
                for o, order in enumerate(_LLMBAR_ORDERS):
                    entry = outcome.get(order)
                    verdicts[start + k, r, o] = _llmbar_winner(entry.get("winner") if isinstance(entry, dict)
                                                               else None)
                if "score_1" in outcome or "score_2" in outcome:
                    scores[start + k, r] = (_llmbar_score(outcome.get("score_1")),
                                            _llmbar_score(outcome.get("score_2")))
    notes = []
    invalid = int((verdicts[:, 1:, :] == INVALID).sum())
    if invalid:
        notes.append(f"{invalid} judge verdicts (of {int((verdicts[:, 1:, :] != MISSING).sum()):,}) name no winner "
                     "(the evaluator's answer could not be parsed) and are kept as invalid.")
    notes.append("The label is the authors' gold label on the LLMBar sets and the source benchmark's human "
                 "preference (ties removed) on MT-Bench, FairEval and LLMEval^2; no set has ties.")
    notes.append("Verdicts are in the original numbering in both orders (swap = True shows output 2 first).")
    has_scores = not np.isnan(scores).all()
    return PairwiseData(
        id="llmbar", items=tuple(items), pair_sets=tuple(LLMBAR_PAIR_SETS), pair_set=np.asarray(pair_set),
        raters=tuple(raters), verdicts=verdicts, scores=scores if has_scores else None,
        inputs=tuple(inputs), output_a=tuple(out_a), output_b=tuple(out_b),
        attributes={"group": tuple(groups)}, notes=tuple(notes),
    )


JUDGEBENCH_FILES: Mapping[str, str] = {  # pair set -> file
    "GPT-4o pairs": "judgebench/data/dataset=judgebench,response_model=gpt-4o-2024-05-13.jsonl",
    "Claude-3.5-Sonnet pairs": "judgebench/data/dataset=judgebench,response_model=claude-3-5-sonnet-20240620.jsonl",
}
JUDGEBENCH_GOLD = "correct"
_JUDGEBENCH_CATEGORIES = (("mmlu-pro", "knowledge"), ("livebench-reasoning", "reasoning"),
                          ("livebench-math", "math"), ("livecodebench", "coding"))


def _category(source: str) -> str:
    return next((name for prefix, name in _JUDGEBENCH_CATEGORIES if source.startswith(prefix)), source)


def load_judgebench(files: LoaderFiles) -> PairwiseData:
    """JudgeBench's response pairs with their correctness label, and no judge: a user attaches a judge's
    verdicts with :func:`attach_verdicts` (joined by ``pair_id``).

    Items are the ``pair_id``; A = ``response_A``; the gold label ``correct`` is the label (``A>B``: A is the
    correct response). Pair sets: the GPT-4o pairs and the Claude-3.5-Sonnet pairs. Item attributes: ``source``
    (MMLU-Pro subject, LiveBench task, LiveCodeBench) and ``category`` (knowledge, reasoning, math, coding).

    References
    ----------
    Tan et al. (ICLR 2025), JudgeBench; docs/methods.md sec. 18.14.
    """
    import json

    items, pair_set, inputs, out_a, out_b, gold, sources = [], [], [], [], [], [], []
    identical = 0
    for s, (name, path) in enumerate(JUDGEBENCH_FILES.items()):
        fpath = _file(files, path)
        with open(fpath, encoding="utf-8") as handle:
            for k, line in enumerate(handle):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    raise _fail(fpath, f"line {k + 1} is not JSON") from None
                label = str(record.get("label", "")).strip()
                if label not in ("A>B", "B>A"):
                    raise _fail(fpath, f"line {k + 1}: label must be A>B or B>A; got {record.get('label')!r}")
                items.append(str(record.get("pair_id")))
                pair_set.append(s)
                inputs.append(str(record.get("question", "")))
                out_a.append(str(record.get("response_A", "")))
                out_b.append(str(record.get("response_B", "")))
                identical += out_a[-1] == out_b[-1]
                gold.append(A if label == "A>B" else B)
                sources.append(str(record.get("source", "")))
    n = len(items)
    verdicts = np.full((n, 1, 2), MISSING, dtype=np.int8)
    verdicts[:, 0, 0] = gold
    notes = ["The label is which response is objectively correct (no human raters, no ties): a judge's agreement "
             "with it is its accuracy at finding the correct response. No judge is included: attach your judge's "
             "verdicts, joined by pair_id."]
    if identical:
        notes.append(f"{identical} pair(s) have identical responses A and B yet a label; no judge can be right on "
                     "them but by chance.")
    return PairwiseData(
        id="judgebench", items=tuple(items), pair_sets=tuple(JUDGEBENCH_FILES), pair_set=np.asarray(pair_set),
        raters=(Rater(JUDGEBENCH_GOLD, "gold", label="correct response (gold)"),), verdicts=verdicts,
        inputs=tuple(inputs), output_a=tuple(out_a), output_b=tuple(out_b),
        attributes={"source": tuple(sources), "category": tuple(_category(x) for x in sources)}, notes=tuple(notes))


def attach_verdicts(data: PairwiseData, frame: Any, *, default_rater: str = "my-judge") -> PairwiseData:
    """``data`` with the verdicts of one or more judges added, joined by item id.

    ``frame`` is a pandas DataFrame (or a CSV/TSV/JSON Lines path) with columns ``item`` (or ``pair_id``),
    ``verdict`` (A, B or tie in the item's own numbering, also ``A>B``/``B>A``; anything else is kept as
    invalid), optionally ``rater`` (default ``default_rater``) and ``order`` (``original``/``swapped``,
    default original). Every item must be one of ``data``'s; items a judge did not judge stay without a
    verdict (its statistics use the items it judged).

    Raises
    ------
    DatasetError
        Missing columns, unknown items (named), a rater id already in ``data``, a second verdict for one
        (item, rater, order).

    References
    ----------
    docs/methods.md sec. 18.14 and 18.10.
    """
    import hashlib

    import pandas as pd

    from metaeval_core.judges.upload import _VERDICT_WORDS

    if not isinstance(frame, pd.DataFrame):
        path = Path(os.fspath(frame))
        name = path.name.lower().removesuffix(".gz")
        if name.endswith((".jsonl", ".json")):
            frame = pd.read_json(path, lines=True, dtype=False)
        else:
            frame = pd.read_csv(path, sep="\t" if name.endswith(".tsv") else ",", dtype=str, keep_default_na=False)
    frame = frame.rename(columns={c: str(c).strip().lower() for c in frame.columns})
    if "item" not in frame and "pair_id" in frame:
        frame = frame.rename(columns={"pair_id": "item"})
    missing = [c for c in ("item", "verdict") if c not in frame]
    if missing:
        raise DatasetError(f"the verdicts need the column(s) {', '.join(missing)} (item or pair_id, verdict; "
                           "optionally rater, order)")
    if frame.empty:
        raise DatasetError("the verdicts file has no rows")
    items = frame["item"].astype(str).str.strip()
    raters = (frame["rater"].astype(str).str.strip() if "rater" in frame else pd.Series(default_rater,
                                                                                       index=frame.index))
    orders = frame["order"].astype(str).str.strip().str.lower() if "order" in frame else pd.Series(
        "original", index=frame.index)
    bad_orders = sorted(set(orders) - set(ORDERS))
    if bad_orders:
        raise DatasetError(f"order must be original or swapped; got {bad_orders[0]!r}")
    position = {item: k for k, item in enumerate(data.items)}
    unknown = sorted(set(items) - set(position))
    if unknown:
        raise DatasetError(f"{len(unknown)} item(s) are not in {data.id!r} (join by its item ids): "
                           + ", ".join(unknown[:3]) + (" ..." if len(unknown) > 3 else ""))
    new = list(dict.fromkeys(raters))
    clash = [r for r in new if r in data.rater_ids]
    if clash:
        raise DatasetError(f"rater {clash[0]!r} is already in {data.id!r}: name your judge otherwise")
    codes = frame["verdict"].astype(str).str.strip().str.lower().map(_VERDICT_WORDS).fillna(INVALID).astype(int)
    added = np.full((data.n_items, len(new), 2), MISSING, dtype=np.int8)
    seen = set()
    for item, rater, order, code in zip(items, raters, orders, codes):
        key = (item, rater, order)
        if key in seen:
            raise DatasetError(f"a second verdict of {rater!r} on item {item!r} ({order} order)")
        seen.add(key)
        added[position[item], new.index(rater), ORDERS.index(order)] = code
    n_invalid = int((added == INVALID).sum())
    digest = hashlib.sha256(pd.util.hash_pandas_object(frame, index=False).values.tobytes()).hexdigest()[:12]
    notes = list(data.notes)
    if n_invalid:
        notes.append(f"{n_invalid} attached verdict(s) are neither A, B nor tie and are kept as invalid.")
    scores = None if data.scores is None else np.concatenate(
        [data.scores, np.full((data.n_items, len(new), 2), np.nan)], axis=1)
    return replace(data, raters=data.raters + tuple(Rater(r, "judge") for r in new),
                   verdicts=np.concatenate([data.verdicts, added], axis=1), scores=scores,
                   version=f"{data.version}:judges={digest}", notes=tuple(notes))


PAIRWISE_LOADERS: Mapping[str, Callable[[LoaderFiles], PairwiseData]] = {
    "pandalm": load_pandalm,
    "llmbar": load_llmbar,
    "judgebench": load_judgebench,
}


def load_pairwise(id_or_path: str | os.PathLike, *, data_dir: Path | None = None, download: bool = False,
                  limits: Any = None) -> PairwiseData:
    """Load a built-in pairwise dataset by id, or a user's verdict file by path.

    Parameters
    ----------
    id_or_path : str or path
        A registry id of kind ``pairwise`` (``'pandalm'``, ``'llmbar'``), or the path of a long CSV/JSONL
        verdict file (:func:`metaeval_core.judges.upload.read_verdict_file`).
    data_dir : path, optional
        The data directory (default: ``$METAEVAL_DATA_DIR`` or ``data/cache``).
    download : bool
        Download missing files of a built-in dataset first.
    limits : UploadLimits, optional
        For a file: the upload limits (default: the deployment's, from the environment).

    Returns
    -------
    PairwiseData
        With the registry's title, citation, licence and description, and ``version`` a hash of the files'
        sha256 and the loader version.

    Raises
    ------
    DatasetError
        Unknown id and no such file; a dataset of score matrices (use ``load_dataset``); missing files
        (:class:`~metaeval_core.data.registry.DatasetUnavailable`); a sha256 mismatch; a malformed file.

    References
    ----------
    docs/methods.md sec. 0 and 16.
    """
    from metaeval_core.data import registry

    if not isinstance(id_or_path, (str, os.PathLike)):
        raise TypeError(f"id_or_path must be a dataset id or a file path; got {type(id_or_path).__name__}")
    key = os.fspath(id_or_path)
    if key in registry.dataset_ids():
        info = registry.dataset_info(key, data_dir=data_dir)
        if info.kind != "pairwise":
            raise DatasetError(f"dataset {key!r} holds score matrices, not pairwise verdicts: load it with "
                               "load_dataset (the judges statistics need A-or-B verdicts)")
        verified = registry.verified_files(key, data_dir=data_dir, download=download)
        loaded = PAIRWISE_LOADERS[info.loader](verified.files)
        return replace(loaded, id=key, title=info.title, citation=info.citation, licence=info.licence,
                       description=info.description, version=verified.version(PAIRWISE_LOADER_VERSION))
    path = Path(key).expanduser()
    if path.is_file():
        from metaeval_core.judges.upload import read_verdict_file

        return read_verdict_file(path, limits=limits)
    pairwise = ", ".join(i.id for i in registry.list_datasets(data_dir=data_dir, kind="pairwise"))
    raise DatasetError(f"{key!r} is neither a built-in pairwise dataset ({pairwise}) nor an existing file")
