"""What a registered claim is (claims/paper_claims.py registers the paper's, claims/successor_claims.py
those of the objectives that followed it): where it is made, what it compares, and the effect its source
gives, carried to a run by its scale."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# How a paper effect is carried to a run: `relative` x the baseline's mean score on the run (of greedy
# decoding, for a drop); `log_ratio`: the paper's ratio, on the log scale.
SCALES = ("relative", "log_ratio")


@dataclass(frozen=True)
class PaperEffect:
    value: float  # the median over the paper's rows: a share of the baseline's score (relative) or a log ratio
    scale: str  # one of SCALES
    derivation: str  # from which of the paper's numbers, and how
    by_row: Mapping[str, float] = field(default_factory=dict)  # each row's own, on the same scale (paper_rows.py)

    def at(self, row: str | None) -> float:
        """The effect of the paper's `row` (a run of that data set and model), else the median over rows."""
        return self.by_row[row] if row is not None and row in self.by_row else self.value


@dataclass(frozen=True)
class Claim:
    name: str
    source: str  # where its paper makes it (the GOLD paper's section or table, or a successor's paper, quoted)
    statement: str  # what it says, in words, with {system} and {baseline}
    contrast: str  # one of paper_claims.CONTRASTS; the claim: its mean is above 0
    systems: tuple[str, ...]  # the objectives (by the paper's names) the claim is about
    baselines: tuple[str, ...]  # what each is compared with (the control: the same updates without GOLD's weights)
    split: str  # "eval": the experiment's evaluation split; "sweep": the decoding sweep's split
    decoders: tuple[str, ...]  # the decoders it is about ("greedy", or each sampling decoder of the sweep)
    effect: PaperEffect | None  # None: its source shows a figure, or gives no number that carries to a run
