"""Prompt templates: `{placeholder}` fields from `PLACEHOLDERS`; `{{` and `}}` are literal braces."""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass

from loopwright.errors import ConfigError, UsageError
from loopwright.workflow._model import PLACEHOLDERS

__all__ = ["TemplateField", "fill_prompt", "parse_template", "prompt_placeholders"]

_FORMATTER = string.Formatter()


@dataclass(frozen=True, slots=True)
class TemplateField:
    """One `{...}` field of a template: its name and whether it adds a `!conversion` or `:spec`."""

    name: str
    decorated: bool

    @property
    def known(self) -> bool:
        """True when the name is a placeholder from `PLACEHOLDERS` and nothing is added to it."""
        return self.name in PLACEHOLDERS and not self.decorated


def parse_template(template: str) -> list[TemplateField]:
    """The fields of `template` in order of appearance (repeats included).

    Raises ConfigError when the braces do not balance (a lone `{` or `}`).
    """
    try:
        parsed = list(_FORMATTER.parse(template))
    except ValueError as exc:
        raise ConfigError(
            f"not a valid prompt template: {exc}",
            fix="write a literal brace as {{ or }}",
        ) from None
    return [
        TemplateField(name=name, decorated=bool(conversion or spec))
        for _, name, spec, conversion in parsed
        if name is not None
    ]


def prompt_placeholders(template: str) -> frozenset[str]:
    """The placeholder names `template` uses, known or not. ConfigError if it does not parse."""
    return frozenset(f.name for f in parse_template(template))


def fill_prompt(template: str, values: Mapping[str, str]) -> str:
    """Fill a template: every `{name}` becomes `values[name]`, `{{`/`}}` become braces.

    Values are inserted literally (braces in them are not interpreted). Raises ConfigError for
    an unknown or decorated placeholder, UsageError when `values` lacks a placeholder the
    template uses. Deterministic.
    """
    fields = parse_template(template)
    bad = sorted({f"{{{f.name}}}" for f in fields if not f.known})
    if bad:
        raise ConfigError(
            f"prompt uses unknown placeholders {', '.join(bad)}",
            fix=f"use only {_known_list()}, written plainly; write literal braces as {{{{ }}}}",
        )
    missing = sorted({f.name for f in fields} - set(values))
    if missing:
        raise UsageError(f"fill_prompt: no value given for {', '.join(missing)}")
    return template.format_map(values)


def _known_list() -> str:
    return ", ".join(f"{{{name}}}" for name in PLACEHOLDERS)
