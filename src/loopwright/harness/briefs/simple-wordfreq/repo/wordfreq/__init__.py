"""Small text statistics helpers."""

from wordfreq.core import top_words

__all__ = ["top_words"]
