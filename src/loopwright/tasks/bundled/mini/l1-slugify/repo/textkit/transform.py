"""Whole-string transformations: case conversion and whitespace clean-up."""

from __future__ import annotations

import re

__all__ = ["collapse_whitespace", "snake_case", "title_case"]

# Words that stay lower case inside a title (but not as its first or last word).
MINOR_WORDS = frozenset(
    {"a", "an", "and", "as", "at", "but", "by", "for", "in", "of", "on", "or", "the", "to"}
)

_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[^A-Za-z0-9]+")


def collapse_whitespace(text: str) -> str:
    """Replace every run of whitespace with one space and strip both ends."""
    return " ".join(text.split())


def snake_case(text: str) -> str:
    """Convert `text` to snake_case.

    Word boundaries are runs of non-alphanumeric characters and lower-to-upper case changes,
    so "HTTPServer error", "httpServerError" and "http-server-error" all split into words.

    >>> snake_case("parseHTTPResponse now")
    'parse_httpresponse_now'
    """
    words = [w for w in _WORD_BOUNDARY.split(text) if w]
    return "_".join(w.lower() for w in words)


def title_case(text: str, minor_words: frozenset[str] = MINOR_WORDS) -> str:
    """Capitalise each word of `text`, keeping `minor_words` lower case except at either end.

    Whitespace is collapsed to single spaces. Words are only capitalised, never lower-cased,
    so acronyms such as "NASA" survive.
    """
    words = text.split()
    titled = []
    for index, word in enumerate(words):
        is_end = index in (0, len(words) - 1)
        if word.lower() in minor_words and not is_end:
            titled.append(word.lower())
        else:
            titled.append(word[:1].upper() + word[1:])
    return " ".join(titled)
