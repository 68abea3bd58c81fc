"""The claims reference (docs/reference/claims.md), generated from the claims registry: every registered
claim of the paper with its source, contrast, decoders and the paper's effect, how a run tests it, and the
claims withdrawn with the paper's reason (`python -m gold_textgen.docs_pages.generated_pages`)."""

from __future__ import annotations

from ..claims.paper_claims import CLAIMS, CONTRASTS, WITHDRAWN
from ..claims.successor_claims import NOT_REGISTERED, successor_claims

HEADER = """# Claims reference

Every claim of the paper that a grid of this workflow can test, registered before any run
(`src/gold_textgen/claims/paper_claims.py`; this page is generated from it:
`python -m gold_textgen.docs_pages.generated_pages`). An experiment tests each claim its grid covers (its
tasks, objectives and decoders), whatever its results: the workflow's `claims` rule writes
`results/<experiment>/tables/claims.csv` (and `.md`, `.html`), and `gold-textgen signatures` prints them
with the run checks (`make demo` does, after the tables). It reads the table only if it is the one the
experiment's run wrote (its digest in `experiment.json`), with each verdict agreeing with its bounds, and
tests every claim the grid covers, from the record's settings when its config files are gone.

**How a claim is tested.** Per training seed, the claim's contrast (below) is computed on the test (or
dev) set and on resamples of its examples (as many as `analysis.bootstrap_resamples`), drawn jointly for
every seed and every model. The mean contrast is tested against 0 as a claim about the method: its
noise is the seeds' spread (the per-seed contrasts' variance over the number of seeds) plus the test set's
variance that every seed shares (the covariance of two seeds' resampled contrasts), the seeds' variance
integrated over its chi-square distribution (a generalized p-value: Student's t over seeds when the test set
adds nothing, the normal test when the seeds agree; `comparisons/method_test.py`, whose level the test suite
simulates at 3, 5 and 10 seeds). The claims of one task are a family, decided at Holm-adjusted levels in
each direction: **supported** (above 0), **contradicted** (below 0) or **inconclusive**. Each verdict
prints its bounds at the level that decided it, so a bound beyond 0 and the verdict always agree, and its
p-value Holm-adjusted. The significance tables use the same test.

**Power against the paper.** A claim with a number in the paper carries the paper's effect to the run
from the paper's row of the run's task: its data set and model (`claims/paper_rows.py`: NQG++ on NQG
for nqg_real and its copies, the pointer-generator on CNN/DM, BART on NQG, CNN/DM and XSum, the
transformer on IWSLT14; Table 2's rows for the standard models), and from the median over the paper's
rows only where the paper has no such row (the demo language, a user's data); the verdict names the row.
A score difference is that row's relative gain times the baseline's score on the run, a perplexity
ratio that row's ratio. Beside each verdict: the power of the run's design
(its seeds, its test set, its measured variances) to show that effect at Holm's strictest level, and the
seeds that would reach 80% ("none" when the test set's shared noise alone is larger than the effect: no
number of seeds shows it on that test set). Beside the direction, each verdict says where the paper's
effect stands against the bounds that decided: within them, or beyond one. An inconclusive claim whose
bounds hold the paper's effect is a design too small to tell; one whose upper bound lies below the
paper's effect rules that effect out at the level that decided ("smaller than the paper's"), and no
number of seeds is offered for it.

**The successors' claims.** The objectives that followed GOLD have their headline claims registered too,
each quoting its own paper (`src/gold_textgen/claims/successor_claims.py`), tested the same way against
the control (the same extra updates as MLE) by any grid that runs the objective and the control
(`configs/objectives.yaml`). None carries an effect size (no rule carries their papers' numbers to a task
metric here), so their verdicts print the smallest effect the design detects with 80% power instead.

A claim leaves the registry only by a commit that gives the paper's reason, never a run's; the withdrawn
ones are listed at the end.

## Contrasts

"""


def markdown() -> str:
    lines = [HEADER.rstrip("\n"), ""]
    lines += [f"- `{name}`: {text}" for name, text in CONTRASTS.items()]
    lines += ["", "## The registry", ""]
    lines += [
        "| claim | source | statement | contrast | systems | against | decoders | the paper's effect |",
        "|---|---|---|---|---|---|---|---|",
    ]
    successors = {claim.name for claim in successor_claims()}
    for claim in (claim for claim in CLAIMS.values() if claim.name not in successors):
        statement = claim.statement.format(system="GOLD", baseline="the baseline")
        effect = (
            "none given (a figure)"
            if claim.effect is None
            else f"{claim.effect.value:.4g} ({claim.effect.scale}): {claim.effect.derivation}"
        )
        cells = [f"`{claim.name}`", claim.source, statement, f"`{claim.contrast}`", ", ".join(claim.systems), ", ".join(claim.baselines)]
        lines.append("| " + " | ".join([*cells, ", ".join(claim.decoders), effect]) + " |")
    lines += [
        "",
        "## The successors' claims",
        "",
        "| claim | source | statement | contrast | against | decoders |",
        "|---|---|---|---|---|---|",
    ]
    for claim in successor_claims():
        statement = claim.statement.format(system=", ".join(claim.systems), baseline="the control")
        cells = [f"`{claim.name}`", claim.source, statement, f"`{claim.contrast}`", ", ".join(claim.baselines), ", ".join(claim.decoders)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Not registered:", ""] + [f"- {name}: {reason}" for name, reason in NOT_REGISTERED.items()]
    lines += ["", "## Withdrawn", "", withdrawn_markdown()]
    return "\n".join(lines)


def withdrawn_markdown() -> str:
    """The claims once tested and withdrawn, with the paper's reason."""
    lines = ["Claims withdrawn from the registry, with the paper's reason:", ""]
    lines += [f"- {claim}: {reason}" for claim, reason in WITHDRAWN.items()] or ["- none"]
    return "\n".join(lines) + "\n"
