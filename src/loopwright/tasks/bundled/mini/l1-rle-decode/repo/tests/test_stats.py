from squeeze.stats import compression_ratio, longest_run


def test_compression_ratio_and_longest_run():
    assert compression_ratio("aaaa") == 0.5
    assert compression_ratio("abcd") == 1.0
    assert longest_run("abbbcc") == ("b", 3)
    assert longest_run("") is None
