from wordfreq import top_words


def test_most_frequent_word_first():
    assert top_words("b a b", 1) == [("b", 2)]
