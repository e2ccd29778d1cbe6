"""Computing the next version for a release."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from semverlite.version import Version

__all__ = ["bump"]

Part = Literal["major", "minor", "patch"]


def bump(version: Version, part: Part) -> Version:
    """The next release after `version`, incrementing `part` and zeroing the parts below it.

    Pre-release and build metadata are dropped. Bumping the patch of a pre-release releases it
    as is ("1.2.3-rc.1" -> "1.2.3"), as SemVer tools conventionally do.
    Raises ValueError for an unknown `part`.
    """
    if part == "major":
        return Version(version.major + 1, 0, 0)
    if part == "minor":
        return Version(version.major, version.minor + 1, 0)
    if part == "patch":
        if version.prerelease:
            return replace(version, prerelease=(), build=())
        return Version(version.major, version.minor, version.patch + 1)
    raise ValueError(f"unknown version part {part!r}; expected 'major', 'minor' or 'patch'")
