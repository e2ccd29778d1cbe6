"""Whole-string transformations: case conversion and whitespace clean-up."""

from __future__ import annotations

import re

from textkit._unicode import fold_to_ascii

__all__ = ["collapse_whitespace", "slugify", "snake_case", "title_case"]

# Words that stay lower case inside a title (but not as its first or last word).
MINOR_WORDS = frozenset(
    {"a", "an", "and", "as", "at", "but", "by", "for", "in", "of", "on", "or", "the", "to"}
)

_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[^A-Za-z0-9]+")
_SLUG_WORD = re.compile(r"[a-z0-9]+")


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


def slugify(text: str, separator: str = "-", max_length: int | None = None) -> str:
    """Turn `text` into a lower-case, URL-safe slug such as "creme-brulee-recipe".

    Accented letters are folded to ASCII (NFKD), other non-ASCII characters are dropped,
    apostrophes are removed, and every run of remaining non-alphanumeric characters becomes
    one `separator`. The slug never starts or ends with the separator.

    With `max_length`, whole words are kept while they fit; a first word longer than
    `max_length` is cut to `max_length` characters.

    Raises ValueError when `separator` is empty or `max_length` is less than 1.
    """
    if not separator:
        raise ValueError("separator must be a non-empty string")
    if max_length is not None and max_length < 1:
        raise ValueError(f"max_length must be at least 1, got {max_length}")
    ascii_text = fold_to_ascii(text)
    words = _SLUG_WORD.findall(ascii_text.replace("'", "").lower())
    if max_length is None:
        return separator.join(words)
    return _fit_words(words, separator, max_length)


def _fit_words(words: list[str], separator: str, max_length: int) -> str:
    kept: list[str] = []
    length = 0
    for word in words:
        added = len(word) + (len(separator) if kept else 0)
        if length + added > max_length:
            break
        kept.append(word)
        length += added
    if not kept and words:
        return words[0][:max_length]
    return separator.join(kept)
