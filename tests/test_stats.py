"""loopwright.stats: the paired bootstrap over tasks is seeded and its interval tells a real gain
from noise; the exact sign and Wilcoxon tests give the textbook p-values."""

from __future__ import annotations

import loopwright.search
from loopwright.search import OverfitDetector
from loopwright.stats import paired_bootstrap, sign_test, wilcoxon


def test_a_consistent_gain_excludes_zero_and_is_deterministic() -> None:
    base = {f"t{i}": [0.4, 0.5] for i in range(8)}
    cand = {f"t{i}": [0.7, 0.8] for i in range(8)}
    ci = paired_bootstrap(base, cand, seed=3)
    assert ci is not None and not ci.includes_zero and abs(ci.gain - 0.3) < 1e-9
    assert ci == paired_bootstrap(base, cand, seed=3)


def test_a_mixed_gain_includes_zero_and_no_shared_task_gives_none() -> None:
    base = {"a": [0.5], "b": [0.5], "c": [0.5], "d": [0.5]}
    cand = {"a": [0.9], "b": [0.1], "c": [0.8], "d": [0.2]}
    ci = paired_bootstrap(base, cand)
    assert ci is not None and ci.includes_zero
    assert paired_bootstrap(base, {"z": [1.0]}) is None


def test_overfit_alarm_only_above_the_threshold() -> None:
    detector = OverfitDetector(0.2)
    assert detector.check(0.9, 0.6).alarm
    assert not detector.check(0.7, 0.6).alarm
    assert not detector.check(0.9, None).alarm


def test_search_re_exports_the_bootstrap_it_documents() -> None:
    assert loopwright.search.paired_bootstrap is paired_bootstrap


def test_the_exact_paired_tests_give_the_textbook_p_values() -> None:
    assert sign_test([1.0] * 5) == 2 / 32  # five wins of five: 2 * (1/2)^5
    assert wilcoxon([1.0, 2.0, 3.0, 4.0, 5.0]) == 2 / 32  # only all-plus and all-minus as extreme
    assert sign_test([0.0, 0.0]) == 1.0 and wilcoxon([]) == 1.0
    assert sign_test([1.0, -1.0, 2.0, -2.0]) == 1.0
    assert wilcoxon([1.0, -1.0, 2.0, -2.0]) == 1.0
