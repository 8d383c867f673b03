"""Synthetic meta-evaluation datasets with a known truth (the offline demo).

A cell's latent quality is ``q[i] + d[j] + e[i, j]``: system quality, input
difficulty and a system-input interaction. Annotators see the latent quality
plus noise, optionally rounded to a 1-5 Likert scale. Each metric sees a mix of
what it can perceive of the latent quality (system quality, input difficulty and
only a share of the interaction) and its own per-summary noise, weighted by its
strength, plus a per-system bias (metrics disagree with humans about some systems
as a whole), on a ROUGE-like 0-100 scale. Like real metrics (NAACL 2022 sec. 3),
they rank systems far better than they rank the summaries of one input, so scoring
systems on every input narrows the rSYS intervals. Metric scores exist on every input; human scores
only on the judged ones.

References: docs/methods.md sec. 9 (TACL 2021 sec. 5); NAACL 2022 sec. 3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaeval_core.data.dataset import Dataset, Measure

DEFAULT_STRENGTHS: tuple[tuple[str, float], ...] = (
    ("metric.strong", 0.9),
    ("metric.good", 0.7),
    ("metric.fair", 0.5),
    ("metric.weak", 0.3),
    ("metric.noise", 0.0),
)


@dataclass(frozen=True)
class SyntheticSpec:
    """Parameters of the synthetic generator (all defaults give the built-in ``demo``)."""

    n_systems: int = 16
    n_judged: int = 100
    n_unjudged: int = 2000
    n_annotators: int = 3
    likert: bool = True
    system_sd: float = 0.5
    input_sd: float = 1.0
    interaction_sd: float = 1.0
    annotator_sd: float = 0.8
    system_bias_sd: float = 0.35
    # Share of the system-input interaction a metric perceives, and the scale of its own per-summary noise.
    # 1.0 and 1.0 gave metrics input-level Kendall tau ~0.6 (real ROUGE/BERTScore on SummEval: ~0.1-0.3) whose
    # judged-input errors moved with the humans' errors; then the shared inputs, resampled jointly, made the
    # judged-pool rSYS interval spuriously narrow and the judged-pool estimate spuriously high (0.933 vs 0.883
    # with all inputs), the opposite of the NAACL 2022 finding the demo is meant to show.
    metric_interaction: float = 0.2
    metric_noise_sd: float = 2.0
    metrics: tuple[tuple[str, float], ...] = DEFAULT_STRENGTHS
    n_extractive: int = 4
    seed: int = 15

    def validate(self) -> None:
        for name in ("n_systems", "n_judged", "n_annotators"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1; got {getattr(self, name)}")
        if self.n_unjudged < 0:
            raise ValueError(f"n_unjudged must be non-negative; got {self.n_unjudged}")
        for name, strength in self.metrics:
            if not 0.0 <= strength <= 1.0:
                raise ValueError(f"metric {name!r}: strength must lie in [0, 1]; got {strength}")
        if not 0.0 <= self.metric_interaction <= 1.0:
            raise ValueError(f"metric_interaction must lie in [0, 1]; got {self.metric_interaction}")
        if not self.metric_noise_sd >= 0.0:
            raise ValueError(f"metric_noise_sd must be non-negative; got {self.metric_noise_sd}")
        if not 0 <= self.n_extractive <= self.n_systems:
            raise ValueError("n_extractive must lie between 0 and n_systems")


@dataclass(frozen=True)
class SyntheticDraw:
    """Raw arrays of one draw: ``annotators`` (A, N, M_judged) and ``metrics`` name -> (N, M_all)."""

    system_quality: np.ndarray
    latent: np.ndarray
    annotators: np.ndarray
    metrics: dict[str, np.ndarray]


def draw_synthetic(spec: SyntheticSpec, rng: np.random.Generator) -> SyntheticDraw:
    """Draw the latent truth, annotator scores and metric scores of one synthetic dataset."""
    spec.validate()
    n, m_jud = spec.n_systems, spec.n_judged
    m_all = m_jud + spec.n_unjudged
    quality = rng.normal(0.0, spec.system_sd, n)
    difficulty = rng.normal(0.0, spec.input_sd, m_all)
    interaction = rng.normal(0.0, spec.interaction_sd, (n, m_all))
    latent = quality[:, None] + difficulty[None, :] + interaction
    noise = rng.normal(0.0, spec.annotator_sd, (spec.n_annotators, n, m_jud))
    annotators = latent[None, :, :m_jud] + noise
    if spec.likert:
        scale = np.sqrt(spec.system_sd**2 + spec.input_sd**2 + spec.interaction_sd**2)
        annotators = np.clip(np.rint(3.0 + 1.2 * annotators / scale), 1, 5)
    seen = quality[:, None] + difficulty[None, :] + spec.metric_interaction * interaction
    standard = (seen - seen.mean()) / seen.std()
    metrics = {}
    for name, strength in spec.metrics:
        own = rng.normal(0.0, spec.metric_noise_sd, (n, m_all))
        bias = rng.normal(0.0, spec.system_bias_sd * (1.0 - strength), n)
        signal = strength * standard + np.sqrt(1.0 - strength**2) * own + bias[:, None]
        metrics[name] = 30.0 + 8.0 * signal
    return SyntheticDraw(quality, latent, annotators, metrics)


def synthetic_dataset(spec: SyntheticSpec | None = None, *, id: str = "demo") -> Dataset:
    """The synthetic dataset of ``spec`` (default: the built-in offline ``demo``).

    References: docs/methods.md sec. 9.
    """
    spec = spec or SyntheticSpec()
    draw = draw_synthetic(spec, np.random.default_rng(spec.seed))
    n, m_jud = spec.n_systems, spec.n_judged
    m_all = m_jud + spec.n_unjudged
    width = len(str(m_all - 1))
    inputs = [f"doc{j:0{width}d}" for j in range(m_all)]
    systems = [f"S{i + 1:02d}" for i in range(n)]
    full_annotators = np.full((spec.n_annotators, n, m_all), np.nan)
    full_annotators[:, :, :m_jud] = draw.annotators
    measures = {"human.quality": Measure.from_annotators("human.quality", "human", full_annotators)}
    for name, matrix in draw.metrics.items():
        measures[name] = Measure(name, "metric", matrix)
    kinds = ["ext" if i < spec.n_extractive else "abs" for i in range(n)]
    return Dataset(
        id=id,
        systems=systems,
        inputs=inputs,
        measures=measures,
        system_attributes={"type": kinds},
        annotator_identity="persons",  # each simulated annotator rates every cell
        title="Synthetic demo (offline)",
        citation="Generated by metaeval_core.data.synthetic (docs/methods.md sec. 9)",
        licence="CC0 (generated)",
        description=(
            f"{n} systems, {m_jud} judged inputs with {spec.n_annotators} annotators"
            f"{' on a 1-5 scale' if spec.likert else ''}, {spec.n_unjudged} unjudged inputs, "
            f"{len(spec.metrics)} metrics from strong to weak; seed {spec.seed}."
        ),
    )
