"""The lessons section of an agent prompt: bullets under "Lessons from earlier attempts:".

Prompt mutations, reflection's improvements and crossover all add to it and read it back, so the
convention lives here, below all three: the section is created before the prompt's first line
starting "How to" or "Find out" (else at the end), and a new lesson goes first in it.
"""

from __future__ import annotations

import re

__all__ = ["LESSONS_HEADER", "add_lesson", "prompt_lessons"]

LESSONS_HEADER = "Lessons from earlier attempts:"

_SECTION_START = re.compile(r"^(How to|Find out)", re.MULTILINE)


def prompt_lessons(prompt: str) -> list[str]:
    """The lessons of `prompt`, in order: each `- ` line right after the header."""
    if LESSONS_HEADER not in prompt:
        return []
    out = []
    for line in prompt.split(LESSONS_HEADER, 1)[1].splitlines()[1:]:
        if not line.startswith("- "):
            break
        out.append(line[2:].strip())
    return out


def add_lesson(prompt: str, sentence: str) -> str:
    """`prompt` with `sentence` as the first lesson (the section is made when missing)."""
    bullet = f"- {sentence}"
    if LESSONS_HEADER in prompt:
        return prompt.replace(LESSONS_HEADER, f"{LESSONS_HEADER}\n{bullet}", 1)
    section = f"{LESSONS_HEADER}\n{bullet}\n"
    match = _SECTION_START.search(prompt)
    if match is None:
        return f"{prompt.rstrip()}\n\n{section}"
    return f"{prompt[: match.start()]}{section}\n{prompt[match.start() :]}"
