"""Unknown cost is never shown as $0.00 (issue 31): `Spent` counts what had no price and says
so (the end-to-end run on an unpriced provider is tests/models/test_evolve_loopback.py)."""

from __future__ import annotations

from loopwright.search import Spent


def test_spent_text_is_the_dollars_or_says_what_is_unknown() -> None:
    assert Spent(usd=1.234).dollars() == "$1.23"
    assert Spent(usd=0.0, unpriced_evaluations=3).dollars() == "unpriced (3)"
    assert Spent(usd=0.5, unpriced_meta_calls=2).dollars() == "$0.50 + 2 unpriced"
    assert Spent.model_validate({"evaluations": 2, "usd": 0.1}).unpriced == 0  # older files
