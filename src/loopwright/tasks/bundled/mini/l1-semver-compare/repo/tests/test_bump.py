from semverlite.bump import bump
from semverlite.version import parse


def test_bump_resets_lower_parts_and_drops_metadata():
    version = parse("1.4.2-rc.1+build.9")
    assert str(bump(version, "major")) == "2.0.0"
    assert str(bump(version, "minor")) == "1.5.0"
    assert str(bump(version, "patch")) == "1.4.2"
    assert str(bump(parse("1.4.2"), "patch")) == "1.4.3"
