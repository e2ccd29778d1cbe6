"""The Version value type and its parser (https://semver.org/, version 2.0.0)."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Version", "compare", "parse"]

_NUMBER = r"0|[1-9]\d*"
_IDENTIFIERS = r"[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*"
_PATTERN = re.compile(
    rf"^(?P<major>{_NUMBER})\.(?P<minor>{_NUMBER})\.(?P<patch>{_NUMBER})"
    rf"(?:-(?P<prerelease>{_IDENTIFIERS}))?"
    rf"(?:\+(?P<build>{_IDENTIFIERS}))?$"
)


@dataclass(frozen=True)
class Version:
    """A semantic version: `major.minor.patch[-prerelease][+build]`.

    `prerelease` and `build` hold the dot-separated identifiers (`("rc", "1")` for `-rc.1`).
    Equality is field-by-field, build metadata included. Instances deliberately do not
    define `<`: tuple order is not SemVer precedence.
    """

    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()
    build: tuple[str, ...] = ()

    @property
    def is_prerelease(self) -> bool:
        return bool(self.prerelease)

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text


def parse(text: str) -> Version:
    """Parse a SemVer 2.0.0 string such as "1.4.0-rc.1+build.7".

    Raises ValueError when `text` is not a valid semantic version (a missing part, a leading
    "v", leading zeros in a number or in a numeric pre-release identifier, empty identifiers).
    """
    match = _PATTERN.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a semantic version; expected e.g. '1.4.0-rc.1+build.7'")
    prerelease = tuple(match["prerelease"].split(".")) if match["prerelease"] else ()
    for identifier in prerelease:
        if identifier.isdigit() and identifier != "0" and identifier.startswith("0"):
            raise ValueError(
                f"{text!r}: numeric pre-release identifier {identifier!r} has a leading zero"
            )
    build = tuple(match["build"].split(".")) if match["build"] else ()
    return Version(int(match["major"]), int(match["minor"]), int(match["patch"]), prerelease, build)


def compare(a: Version | str, b: Version | str) -> int:
    """Compare two versions by SemVer 2.0.0 precedence: -1 if a < b, 0 if equal, 1 if a > b.

    Strings are parsed with `parse`. Major, minor and patch compare numerically; a
    pre-release ranks below the same version without one; pre-release identifiers compare
    left to right (numeric ones as numbers and below alphanumeric ones, alphanumeric ones in
    ASCII order; with equal leading identifiers, the longer list ranks higher). Build metadata
    is ignored. Raises ValueError for an invalid version string and TypeError when an argument
    is neither a Version nor a str. Deterministic.
    """
    left, right = _as_version(a), _as_version(b)
    left_core = (left.major, left.minor, left.patch)
    right_core = (right.major, right.minor, right.patch)
    if left_core != right_core:
        return -1 if left_core < right_core else 1
    return _compare_prerelease(left.prerelease, right.prerelease)


def _as_version(value: Version | str) -> Version:
    if isinstance(value, Version):
        return value
    if isinstance(value, str):
        return parse(value)
    raise TypeError(f"compare() takes Version objects or strings, got {type(value).__name__}")


def _compare_prerelease(left: tuple[str, ...], right: tuple[str, ...]) -> int:
    if left == right:
        return 0
    for mine, theirs in zip(left, right):
        if mine != theirs:
            return -1 if _identifier_key(mine) < _identifier_key(theirs) else 1
    return -1 if len(left) < len(right) else 1


def _identifier_key(identifier: str) -> tuple[int, int, str]:
    """Numeric identifiers sort as numbers and before every alphanumeric identifier."""
    if identifier.isdigit():
        return (0, int(identifier), "")
    return (1, 0, identifier)
