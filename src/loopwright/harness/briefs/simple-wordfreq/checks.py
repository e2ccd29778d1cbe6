"""Hidden checks of simple-wordfreq: each imports the produced code and calls it."""


def check_counts_and_orders_by_frequency():
    from wordfreq import top_words

    assert top_words("a b b c c c", 3) == [("c", 3), ("b", 2), ("a", 1)]


def check_ties_are_alphabetical():
    from wordfreq import top_words

    assert top_words("pear fig apple fig pear apple kiwi", 4) == [
        ("apple", 2),
        ("fig", 2),
        ("pear", 2),
        ("kiwi", 1),
    ]


def check_case_insensitive_and_lowered():
    from wordfreq import top_words

    assert top_words("The cat saw THE dog; the end.", 2) == [("the", 3), ("cat", 1)]


def check_punctuation_separates_and_apostrophes_stay():
    from wordfreq import top_words

    assert top_words("don't stop--don't, STOP!! x2 x2 x2", 3) == [
        ("x2", 3),
        ("don't", 2),
        ("stop", 2),
    ]


def check_n_larger_than_distinct_returns_all():
    from wordfreq import top_words

    assert top_words("one two two", 10) == [("two", 2), ("one", 1)]


def check_non_positive_n_and_empty_text():
    from wordfreq import top_words

    assert top_words("a a b", 0) == []
    assert top_words("a a b", -3) == []
    assert top_words("  ...  ", 5) == []
