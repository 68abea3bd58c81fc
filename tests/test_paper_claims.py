"""The claims registry (claims/paper_claims.py): the paper's numbers it derives effects from are those of
configs/paper.yaml, every claim names its source and contrast, and an experiment's claims follow from its
grid alone."""

import math

import pytest
import yaml
from conftest import REPO

from gold_textgen.claims import paper_claims, paper_numbers
from gold_textgen.claims.claim_types import SCALES
from gold_textgen.claims.paper_claims import CLAIMS, CONTRASTS, WITHDRAWN, covered_claims, outputs_read


def paper_results():
    config = yaml.safe_load((REPO / "configs" / "paper.yaml").read_text())
    return {task: settings["paper_results"] for task, settings in config["tasks"].items() if settings.get("paper_results")}


def numbers(task, table, decoder=None):
    entries = [e for e in paper_results()[task] if e["table"] == table and e.get("decoder", decoder) == decoder]
    return entries[0]["results"]


def test_the_registrys_paper_numbers_are_configs_paper_yaml_s():
    nqg, cnndm = numbers("nqg_standard", "1"), numbers("cnndm_standard", "1")
    for variant in ("gold_delta", "gold_p", "gold_s"):
        assert paper_numbers.QUALITY[variant]["NQG (NQG++, BLEU)"] == (nqg[variant]["bleu"], nqg["mle"]["bleu"])
        assert paper_numbers.QUALITY[variant]["CNN/DM (pointer-generator, R-2)"] == (cnndm[variant]["rouge2"], cnndm["mle"]["rouge2"])
        assert paper_numbers.PERPLEXITY[variant]["NQG (NQG++)"] == (nqg[variant]["perplexity"], nqg["mle"]["perplexity"])
    bart = numbers("nqg", "3")
    for variant in ("gold_p", "gold_s"):
        assert paper_numbers.QUALITY[variant]["NQG (BART, BLEU)"] == (bart[variant]["bleu"], bart["mle"]["bleu"])
    for decoder in ("topk5", "topk20"):
        greedy, sampled = numbers("nqg_standard", "2", "greedy"), numbers("nqg_standard", "2", decoder)
        expected = (greedy["mle"]["bleu"], sampled["mle"]["bleu"], greedy["gold_s"]["bleu"], sampled["gold_s"]["bleu"])
        assert paper_numbers.SAMPLING_DROPS[decoder]["NQG (BLEU)"] == expected
    on_policy = numbers("nqg_standard", "4")
    assert paper_numbers.ON_POLICY["NQG (NQG++, BLEU)"] == (on_policy["gold_pg"]["bleu"], on_policy["mle_pg"]["bleu"])


def test_every_claim_names_its_source_contrast_and_the_papers_effect_where_the_paper_gives_one():
    for claim in CLAIMS.values():
        assert claim.source and claim.contrast in CONTRASTS and "{system}" in claim.statement
        if claim.effect is not None:
            assert claim.effect.scale in SCALES and claim.effect.value > 0 and claim.effect.derivation
    # GOLD-s's quality: the median of its six relative gains in Tables 1 and 3
    gains = sorted((ours - theirs) / theirs for ours, theirs in paper_numbers.QUALITY["gold_s"].values())
    assert CLAIMS["quality_gold_s"].effect.value == pytest.approx((gains[2] + gains[3]) / 2)
    ratios = sorted(ours / theirs for ours, theirs in paper_numbers.PERPLEXITY["gold_s"].values())
    assert CLAIMS["perplexity_gold_s"].effect.value == pytest.approx(math.log((ratios[2] + ratios[3]) / 2))
    # beyond MLE: Table 1's GOLD-s against GOLD-delta on NQG++ (16.10 against 14.96), Table 4's rows
    assert CLAIMS["estimated_reward_gold_s"].effect.by_row["NQG (NQG++, BLEU)"] == pytest.approx(16.10 / 14.96 - 1)
    assert CLAIMS["on_policy_improves_gold"].effect.by_row["CNN/DM (pointer-generator, R-2)"] == pytest.approx(18.14 / 17.81 - 1)
    assert CLAIMS["gold_over_policy_gradient"].effect.by_row["NQG (NQG++, BLEU)"] == pytest.approx(16.10 / 14.55 - 1)
    # the greedy-BLEU claim is registered; the demo's own 3x ratio stands withdrawn, with the paper's reason
    assert "quality_gold_s" in CLAIMS and any("Table 2" in reason for reason in WITHDRAWN.values())


def test_an_experiments_claims_follow_from_its_grid_alone():
    demo = covered_claims(
        ["demo"], {"demo": ["mle", "mle_continued", "gold_s"]}, "test", ["greedy"], "valid", ["greedy", "beam5", "topk20"]
    )
    names = {test.name for test in demo}
    assert "quality_gold_s: gold_s vs mle" in names and "quality_gold_s: gold_s vs mle_continued" in names
    assert "sampling_drop_topk20: gold_s vs mle (topk20)" in names and not any("topk5" in name for name in names)
    assert not any(test.claim.startswith(("quality_gold_p", "on_policy")) for test in demo)
    assert len(demo) == 12  # quality, perplexity, the drop, both NLL shares and exposure bias, each against MLE and the control
    # no greedy decoding in the sweep: no drop claim; Table 4's objectives: the on-policy claim
    no_sweep = covered_claims(["t"], {"t": ["mle", "gold_s"]}, "test", ["greedy"], "valid", ["topk20"])
    assert not any(test.claim.startswith("sampling_drop") for test in no_sweep)
    on_policy = covered_claims(["t"], {"t": ["mle", "mle_pg", "gold_pg"]}, "test", ["greedy"], "valid", [])
    assert [test.name for test in on_policy] == ["on_policy_quality: gold_pg vs mle_pg", "on_policy_improves_mle: mle_pg vs mle"]
    # Table 4's grid (configs/on_policy.yaml: GOLD-s and the two PG runs beside MLE) and Table 1's three rewards
    table4 = covered_claims(["t"], {"t": ["mle", "gold_s", "mle_pg", "gold_pg"]}, "test", ["greedy"], "valid", [])
    assert {"on_policy_improves_gold: gold_pg vs gold_s", "gold_over_policy_gradient: gold_s vs mle_pg"} <= {t.name for t in table4}
    table1 = covered_claims(["t"], {"t": ["mle", "gold_delta", "gold_p", "gold_s"]}, "test", ["greedy"], "valid", [])
    assert {"estimated_reward_gold_p: gold_p vs gold_delta", "estimated_reward_gold_s: gold_s vs gold_delta"} <= {t.name for t in table1}


def test_the_outputs_a_claim_reads_are_its_models_with_its_decoders_and_nll_where_read():
    drop, perplexity = (
        paper_claims.ClaimTest("sampling_drop_topk20", "t", "gold_s", "mle", "topk20", "valid"),
        paper_claims.ClaimTest("perplexity_gold_s", "t", "gold_s", "mle", "greedy", "test"),
    )
    assert outputs_read([drop, perplexity]) == [
        ("t", "gold_s", "test", "greedy", True),
        ("t", "gold_s", "valid", "greedy", False),
        ("t", "gold_s", "valid", "topk20", False),
        ("t", "mle", "test", "greedy", True),
        ("t", "mle", "valid", "greedy", False),
        ("t", "mle", "valid", "topk20", False),
    ]


def test_the_successors_claims_quote_their_papers_and_configs_objectives_yaml_tests_them():
    """DFT, TaiLr, MixCE and loss truncation each have a claim quoting its own paper, tested against the
    control; GEM and the objectives of 2025-2026 stand listed with the reason they are not registered; the
    objectives grid covers every successor claim, and the demo's grid none of them."""
    from gold_textgen.catalog import LOSSES
    from gold_textgen.claims.paper_claims import experiment_claims
    from gold_textgen.claims.successor_claims import NOT_REGISTERED, successor_claims
    from gold_textgen.config.layers import merged_config
    from gold_textgen.config.schema import validate_config

    successors = successor_claims()
    assert {system for claim in successors for system in claim.systems} == {"dft", "tailr", "mixce", "loss_truncation"}
    for claim in successors:
        assert claim.name in CLAIMS and claim.baselines == ("mle_continued",) and claim.effect is None
        assert 'abstract: "' in claim.source and all(system in LOSSES for system in claim.systems)
        assert ("a proxy" in claim.statement) == ("measured by no grid here" in claim.source)
    assert any(name.startswith("GEM") for name in NOT_REGISTERED)
    objectives = validate_config(merged_config(REPO / "config.yaml", [REPO / "configs" / "objectives.yaml"]))
    tested = {test.claim for test in experiment_claims(objectives)}
    assert {claim.name for claim in successors} <= tested
    demo = validate_config(merged_config(REPO / "config.yaml", []))
    assert not {claim.name for claim in successors} & {test.claim for test in experiment_claims(demo)}
