"""A small test set written in google-research/mt-metrics-eval's data layout (its README, "File organization
and naming convention"), with the scores kept in Python so the tests can compare what metaeval reads.

No WMT data: every number is generated from a seed. Layout written under ``root/<test set>/``::

    sources/<lp>.txt  documents/<lp>.docs  references/<lp>.<ref>.txt  system-outputs/<lp>/<system>.txt
    human-scores/<lp>.<name>.<level>.score  metric-scores/<lp>/<metric>-<ref>.<level>.score
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

TEST_SET = "wmt99"
# en-de: 3 MT systems and reference refB scored as a system; 7 segments in 3 documents of 2 domains.
EN_DE_SYSTEMS = ("refB", "sysA", "sysB", "sysC")
EN_DE_DOCS = [("news", "doc1")] * 3 + [("social", "doc2")] * 2 + [("news", "doc3")] * 2
ZH_EN_SYSTEMS = ("m1", "m2", "m3")


@dataclass
class Replica:
    """What was written: ``seg[lp][measure][system]`` lists (None = missing) and ``sys[lp][measure][system]``."""

    root: Path
    seg: dict = field(default_factory=dict)
    sys: dict = field(default_factory=dict)

    @property
    def test_set(self) -> Path:
        return self.root / TEST_SET


def _write_scores(path: Path, scores: dict[str, list], *, domains: list[str] | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for system, values in scores.items():
        for k, value in enumerate(values):
            text = "None" if value is None else repr(float(value))
            lines.append(f"{domains[k]}\t{system}\t{text}" if domains else f"{system}\t{text}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _text(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_replica(root: Path, *, seed: int = 0) -> Replica:
    """Write the replica under ``root`` and return what it holds."""
    rng = np.random.default_rng(seed)
    replica = Replica(root)
    base = replica.test_set
    n = len(EN_DE_DOCS)
    lp = "en-de"
    _text(base / "sources" / f"{lp}.txt", [f"source sentence {k}" for k in range(n)])
    _text(base / "documents" / f"{lp}.docs", [f"{d} {doc}" for d, doc in EN_DE_DOCS])
    for ref in ("refA", "refB"):
        _text(base / "references" / f"{lp}.{ref}.txt", [f"{ref} translation {k}" for k in range(n)])
    for system in EN_DE_SYSTEMS:
        _text(base / "system-outputs" / lp / f"{system}.txt", [f"{system} output {k}" for k in range(n)])
    quality = {s: q for s, q in zip(EN_DE_SYSTEMS, (0.0, -2.0, -4.0, -6.0))}
    seg: dict[str, dict[str, list]] = {}
    # MQM (lower is worse, negative penalties): refB and sysC unscored on some segments; sysC wholly on 2.
    mqm = {s: [round(q + rng.normal(), 3) for _ in range(n)] for s, q in quality.items()}
    mqm["refB"][1] = None
    mqm["sysC"][5] = mqm["sysC"][6] = None
    for s in mqm:
        mqm[s][4] = None  # segment 5: no human score at all -> unjudged
    seg["mqm"] = mqm
    seg["wmt-raw"] = {s: [round(70 + 5 * q + 10 * rng.normal(), 2) for _ in range(n)]
                      for s, q in quality.items() if s != "refB"}
    for s in seg["wmt-raw"]:
        seg["wmt-raw"][s][4] = None
    metrics = {
        "BLEU-refA": lambda q: 30 + 3 * q + 5 * rng.normal(),
        "COMET-22-refA": lambda q: 0.8 + 0.02 * q + 0.05 * rng.normal(),
        "COMET-22-refB": lambda q: 0.8 + 0.02 * q + 0.05 * rng.normal(),
        "Prism-src": lambda q: -1.5 + 0.1 * q + 0.2 * rng.normal(),
        "YiSi-1-refA.refB": lambda q: 0.7 + 0.01 * q + 0.05 * rng.normal(),
    }
    for name, draw in metrics.items():
        refs = name.rsplit("-", 1)[1].split(".")
        seg[name] = {s: [draw(q) for _ in range(n)] for s, q in quality.items() if s not in refs}
    replica.seg[lp] = seg
    sys_scores = {
        # MQM system score = mean over scored segments (as WMT computes it).
        "mqm": {s: [float(np.mean([v for v in values if v is not None]))] for s, values in mqm.items()},
        # a system-only human score (no segment file)
        "wmt-z": {s: [round(0.3 * q + 0.1 * rng.normal(), 4)] for s, q in quality.items() if s != "refB"},
        # corpus-level BLEU: not the mean of the segment scores
        "BLEU-refA": {s: [float(np.mean(v)) + 1.5] for s, v in seg["BLEU-refA"].items()},
        # the mean of the segment scores exactly
        "COMET-22-refA": {s: [float(np.mean(v))] for s, v in seg["COMET-22-refA"].items()},
    }
    replica.sys[lp] = sys_scores
    for name, scores in seg.items():
        _write_scores(_path(base, lp, name, "seg"), scores)
    for name, scores in sys_scores.items():
        _write_scores(_path(base, lp, name, "sys"), scores)
    # Levels metaeval does not read: a domain-level and a document-level file, and an MQM rating file.
    domains = sorted({d for d, _ in EN_DE_DOCS})
    _write_scores(_path(base, lp, "mqm", "domain"), {s: [-1.0, -2.0] for s in EN_DE_SYSTEMS}, domains=domains)
    _write_scores(_path(base, lp, "mqm", "doc"), {s: [-1.0, -2.0, -3.0] for s in EN_DE_SYSTEMS})
    _text(base / "human-scores" / f"{lp}.mqm.merged.seg.rating", ["sysA None"])

    # zh-en: a second language pair, without sources/documents/system-outputs (counts from the files).
    lp = "zh-en"
    m = 5
    q2 = {"m1": 1.0, "m2": 0.0, "m3": -1.0}
    seg2 = {
        "da": {s: [round(60 + 10 * q + 8 * rng.normal(), 1) for _ in range(m)] for s, q in q2.items()},
        "chrF-refA": {s: [50 + 5 * q + 4 * rng.normal() for _ in range(m)] for s, q in q2.items()},
    }
    replica.seg[lp] = seg2
    replica.sys[lp] = {}
    for name, scores in seg2.items():
        _write_scores(_path(base, lp, name, "seg"), scores)
    return replica


def _path(base: Path, lp: str, name: str, level: str) -> Path:
    human = name in ("mqm", "wmt-raw", "wmt-z", "da")
    if human:
        return base / "human-scores" / f"{lp}.{name}.{level}.score"
    return base / "metric-scores" / lp / f"{name}.{level}.score"


def zip_replica(replica: Replica, target: Path, *, top: str = TEST_SET) -> Path:
    """Zip the test set with its folder (``top``) as the archive's top level."""
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(replica.test_set.rglob("*")):
            if path.is_file():
                archive.write(path, str(Path(top) / path.relative_to(replica.test_set)) if top else
                              str(path.relative_to(replica.test_set)))
    return target
