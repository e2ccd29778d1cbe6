import pytest

from textkit.wrap import truncate, wrap


def test_wrap_fills_lines_greedily():
    assert wrap("the quick brown fox jumps", 10) == ["the quick", "brown fox", "jumps"]
    assert wrap("a verylongword b", 4) == ["a", "verylongword", "b"]
    with pytest.raises(ValueError):
        wrap("text", 0)


def test_truncate_adds_ellipsis_only_when_cut():
    assert truncate("short", 10) == "short"
    assert truncate("hello wonderful world", 10) == "hello won…"
