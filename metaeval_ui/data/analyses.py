"""Cached core calls of the paper-analysis pages (docs/methods.md sec. 7-8: top-k, pairwise F1, correlation matrix,
annotators, high-scoring range, normality).

Same pattern as :mod:`metaeval_ui.data`: the dataset is passed as ``_dataset`` (leading underscore: never hashed)
with its small :data:`metaeval_ui.data.DatasetKey` ``(id, version)`` and plain option values (tuples, str, int);
``max_entries`` bounds every cache. Results are the core's frozen dataclasses or small DataFrames.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from metaeval_core.analyses import papers as analyses
from metaeval_core.stats.coefficients import POINT_COEFFICIENTS as COEFFICIENTS
from metaeval_core.stats.correlation import LEVELS
from metaeval_core.data.dataset import Dataset

from metaeval_ui.data.datasets import DatasetKey
from metaeval_ui.errors import EXPECTED, message_of

# Pairwise F1: one bootstrap over the judged inputs shared by all pairs and measures; the time grows
# linearly in k (1,000 resamples of 26 metrics x 276 pairs take about a second) while the 95% labels of
# all but borderline pairs are settled long before 5,000.
MAX_F1_RESAMPLES = 5_000
MAX_BINS = 50


def _subset(systems: str) -> str | None:
    return systems or None


def n_systems(dataset: Dataset, systems: str) -> int:
    return dataset.select_systems(_subset(systems)).n_systems if systems else dataset.n_systems


@st.cache_data(max_entries=64, show_spinner=False)
def topk(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], human: str, coefficient: str, pool: str,
         systems: str) -> tuple[pd.DataFrame, tuple[str, ...], tuple[str, ...]]:
    """(top-k curves as a long frame: metric, k, estimate (NaN when undefined), n; ranking; unranked)."""
    result = analyses.topk_correlations(_dataset, list(metrics), human, coefficient=coefficient, pool=pool,
                                        systems=_subset(systems))
    frame = pd.DataFrame(result.to_records(), columns=["metric", "k", "estimate"])
    frame["estimate"] = frame["estimate"].astype(float)
    frame["n"] = result.n.ravel().astype(int)
    return frame, result.ranking, result.unranked


@st.cache_data(max_entries=32, show_spinner=False)
def pairwise(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], human: str, systems: str,
             n_resamples: int, seed: int) -> analyses.PairwiseF1Result:
    return analyses.pairwise_f1(_dataset, list(metrics), human, n_resamples=int(n_resamples),
                                systems=_subset(systems), rng=int(seed))


LABEL_NAMES = {0: "no difference", 1: "A better", 2: "B better"}  # 0: not significant at 95%


def label_frame(result: analyses.PairwiseF1Result, metric: str) -> pd.DataFrame:
    """The per-pair labels of one metric with readable labels and an ``agree`` column."""
    frame = pd.DataFrame(result.label_records(metric))
    if frame.empty:
        return frame
    frame["agree"] = frame["human_label"] == frame["metric_label"]
    for column in ("human_label", "metric_label"):
        frame[column] = frame[column].map(LABEL_NAMES)
    return frame[["system_a", "system_b", "human_label", "metric_label", "agree", "human_share", "human_share_b",
                  "metric_share", "metric_share_b"]]


@st.cache_data(max_entries=64, show_spinner=False)
def matrix(_dataset: Dataset, key: DatasetKey, measures: tuple[str, ...], level: str, coefficient: str, pool: str,
           systems: str, order: str) -> analyses.CorrelationMatrix:
    return analyses.correlation_matrix(_dataset, list(measures), level=level, coefficient=coefficient, pool=pool,
                                       systems=_subset(systems), order=order)


def annotated_measures(dataset: Dataset) -> list[str]:
    """The human measures that keep each annotator's score."""
    return [h for h in dataset.human_measures if dataset.measure(h).annotators is not None]


def has_annotators(dataset: Dataset) -> bool:
    return bool(annotated_measures(dataset))


@st.cache_data(max_entries=32, show_spinner=False)
def annotators(_dataset: Dataset, key: DatasetKey, systems: str) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """(alpha rows, group-correlation rows at every level and coefficient, the alpha note)."""
    result = analyses.annotator_agreement(_dataset, levels=LEVELS, coefficients=COEFFICIENTS,
                                          systems=_subset(systems))
    alphas = pd.DataFrame(result.to_records(),
                          columns=["group", "dimension", "alpha", "n_units", "n_values", "n_annotators"])
    alphas["alpha"] = alphas["alpha"].astype(float)
    corr = pd.DataFrame(result.correlation_records(), columns=["dimension", "group_a", "group_b", "level",
                                                               "coefficient", "estimate", "n", "n_undefined"])
    corr["estimate"] = corr["estimate"].astype(float)
    return alphas, corr, result.note


@st.cache_data(max_entries=32, show_spinner=False)
def high_range(_dataset: Dataset, key: DatasetKey, metrics: tuple[str, ...], baseline: str, n_bins: int,
               normalise: str, pool: str, systems: str) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(tau rows all vs top, disagreement-curve rows, summary: mean kept per input, mean taus, inputs)."""
    result = analyses.high_range(_dataset, list(metrics), baseline=baseline, n_bins=int(n_bins),
                                 normalise=normalise, pool=pool, systems=_subset(systems))
    taus = pd.DataFrame(result.to_records(), columns=["metric_a", "metric_b", "tau_all", "tau_top", "n_inputs_all",
                                                      "n_inputs_top"])
    curve = pd.DataFrame(result.curve_records(), columns=["metric_a", "metric_b", "bin_low", "bin_high",
                                                          "disagreement", "n_pairs"])
    for frame, columns in ((taus, ("tau_all", "tau_top")), (curve, ("disagreement",))):
        for column in columns:
            frame[column] = frame[column].astype(float)
    summary = {"mean_kept": result.mean_kept, "mean_tau_all": result.mean_tau_all,
               "mean_tau_top": result.mean_tau_top, "n_inputs": len(result.input_names),
               "n_systems": len(result.system_names)}
    return taus, curve, summary


@st.cache_data(max_entries=64, show_spinner=False)
def normality(_dataset: Dataset, key: DatasetKey, measures: tuple[str, ...], pool: str, systems: str,
              alpha: float) -> pd.DataFrame:
    table = analyses.normality_table(_dataset, list(measures), pool=pool, systems=_subset(systems), alpha=alpha)
    frame = pd.DataFrame(table.to_records(), columns=["measure", "kind", "pool", "system_p", "system_n",
                                                      "input_share", "input_tested", "input_skipped"])
    return frame.astype({"system_p": float, "input_share": float})


def default_baseline(dataset: Dataset, systems: str) -> str | None:
    """SummEval's Lead-3 (M0) or a system named like a lead baseline, else the first system."""
    names = list(dataset.select_systems(_subset(systems)).systems) if systems else list(dataset.systems)
    if not names:
        return None
    for name in names:
        if name == "M0" or "lead" in name.lower():
            return name
    return names[0]


# -- simulations (docs/methods.md sec. 9) ---------------------------------------------------------------------------
# Runs happen in a background thread (one per kind and session) so that the page stays responsive: the
# fragment polling it shows the progress, and Stop sets a flag read by ``should_stop``. Finished runs are
# cached with st.cache_data on the frozen config; a stopped run raises :class:`Stopped`, so it is shown
# (flagged) but never cached.

MAX_COVERAGE_TRIALS = 1_000  # TACL Table 1 uses 1,000; the coverage's standard error is then about 0.007
MAX_POWER_TRIALS = 200  # every trial runs (#k x #tests) tests; 200 trials put the power's se below 0.035
MAX_SIM_RESAMPLES = 1_000  # per interval / test in every trial: the bounds settle well before


@dataclass(frozen=True)
class CoverageConfig:
    dataset: DatasetKey
    metric: str
    human: str
    level: str
    coefficient: str
    systems: str
    methods: tuple[str, ...]
    n_trials: int
    n_resamples: int
    seed: int


@dataclass(frozen=True)
class PowerConfig:
    dataset: DatasetKey
    metric: str
    human: str
    level: str
    coefficient: str
    systems: str
    tests: tuple[str, ...]
    degrade: str
    n_trials: int
    n_resamples: int
    seed: int
    data_dir: str = ""


class Stopped(Exception):
    """A run ended early by Stop: carries its (partial) summary, which is not cached."""

    def __init__(self, summary: dict) -> None:
        super().__init__("stopped")
        self.summary = summary


def _frame(records: list[dict], columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(records)
    return frame[[c for c in columns if c in frame.columns]] if not frame.empty else pd.DataFrame(columns=columns)


@st.cache_data(max_entries=16, show_spinner=False)
def coverage(_dataset: Dataset, config: CoverageConfig, _progress=None, _should_stop=None) -> dict:
    """CI coverage summary: {'table': frame (method, coverage, se, ...), 'meta': {...}}."""
    from metaeval_core.analyses import simulations

    result = simulations.ci_coverage(
        _dataset, config.metric, config.human, level=config.level, coefficient=config.coefficient,
        methods=config.methods, n_trials=config.n_trials, n_resamples=config.n_resamples, rng=config.seed,
        systems=_subset(config.systems), progress=_progress, should_stop=_should_stop)
    summary = {"table": _frame([r.to_dict() for r in result.rows],
                               ["method", "coverage", "se", "n_covered", "n_valid", "n_undefined", "mean_width"]),
               "meta": {"n_completed": result.n_completed, "n_trials": result.n_trials, "stopped": result.stopped,
                        "half_systems": result.half_systems, "half_inputs": result.half_inputs,
                        "confidence_level": result.confidence_level}}
    if result.stopped:
        raise Stopped(summary)
    return summary


@st.cache_resource(max_entries=2, show_spinner=False)
def summary_texts(dataset_id: str, data_dir: str):
    from metaeval_core.data import texts

    return texts.load_texts(dataset_id, data_dir=data_dir or None)


def token_degrade_possible(dataset: Dataset, metric: str, data_dir: str) -> str:
    """'' when ROUGE-1 on k% of the tokens can be simulated for ``metric``, else the reason why not."""
    from metaeval_core.analyses import simulations
    from metaeval_core.data import texts

    if not texts.texts_available(dataset.id, data_dir=data_dir or None):
        return f"no output texts for {dataset.id} (only SummEval ships them)"
    if simulations.rouge1_variant(metric) is None:
        return f"{metric} is not a ROUGE-1 variant (rouge-1.f1, rouge-1.recall, rouge-1.precision)"
    return ""


@st.cache_data(max_entries=16, show_spinner=False)
def power(_dataset: Dataset, config: PowerConfig, _progress=None, _should_stop=None) -> dict:
    """Power summary: {'table': frame (test, k, power, se, ...), 'meta': {...}}."""
    from metaeval_core.analyses import simulations

    texts = summary_texts(_dataset.id, config.data_dir) if config.degrade == "tokens" else None
    result = simulations.power_curve(
        _dataset, config.metric, config.human, level=config.level, coefficient=config.coefficient,
        tests=config.tests, n_trials=config.n_trials, n_resamples=config.n_resamples, degrade=config.degrade,
        texts=texts, rng=config.seed, systems=_subset(config.systems), progress=_progress,
        should_stop=_should_stop)
    summary = {"table": _frame([r.to_dict() for r in result.rows],
                               ["test", "k", "power", "se", "n_rejected", "n_valid", "n_undefined", "mean_pvalue",
                                "mean_delta"]),
               "meta": {"n_completed": result.n_completed, "n_trials": result.n_trials, "stopped": result.stopped,
                        "estimate_x": result.estimate_x, "degrade": result.degrade, "variant": result.variant,
                        "alpha": result.alpha, "ks": list(result.ks)}}
    if result.stopped:
        raise Stopped(summary)
    return summary


class SimJob:
    """One simulation running in a background thread; the page polls ``fraction`` / ``done``."""

    def __init__(self, config, run) -> None:
        self.config = config
        self.fraction = 0.0
        self.stop_requested = False
        self.summary: dict | None = None
        self.error = ""
        self.stopped = False
        self.done = False
        self.started = time.monotonic()
        self._run = run
        self.thread = threading.Thread(target=self._target, daemon=True, name="metaeval-simulation")

    def _progress(self, fraction: float) -> None:
        self.fraction = float(min(max(fraction, 0.0), 1.0))

    def _should_stop(self) -> bool:
        return self.stop_requested

    def _target(self) -> None:
        try:
            self.summary = self._run(self._progress, self._should_stop)
        except Stopped as stopped:
            self.summary, self.stopped = stopped.summary, True
        except EXPECTED as error:  # bad choices: shown as a message, never a traceback
            self.error = message_of(error)
        except Exception as error:  # noqa: BLE001 - a thread must not die silently
            self.error = f"unexpected {type(error).__name__}: {error}"
        finally:
            self.done = True

    @property
    def running(self) -> bool:
        return not self.done

    def start(self) -> "SimJob":
        from streamlit.runtime.scriptrunner import add_script_run_ctx

        add_script_run_ctx(self.thread)
        self.thread.start()
        return self


def start_coverage(dataset: Dataset, config: CoverageConfig) -> SimJob:
    return SimJob(config, lambda progress, stop: coverage(dataset, config, progress, stop)).start()


def start_power(dataset: Dataset, config: PowerConfig) -> SimJob:
    return SimJob(config, lambda progress, stop: power(dataset, config, progress, stop)).start()
