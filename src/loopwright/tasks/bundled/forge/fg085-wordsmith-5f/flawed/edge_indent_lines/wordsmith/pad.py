"""wordsmith.pad: Padding and indenting text."""

from __future__ import annotations


def center_text(text: str, width: int, fill: str = " ") -> str:
    """`text` centred in `width` columns; extra padding on the right."""
    if len(fill) != 1:
        raise ValueError("fill must be one character")
    total = max(width - len(text), 0)
    left = total // 2
    return fill * left + text + fill * (total - left)


def indent_lines(text: str, prefix: str = "    ") -> str:
    """Each non-blank line prefixed; a final newline kept."""
    return "\n".join(prefix + line for line in text.split("\n"))
