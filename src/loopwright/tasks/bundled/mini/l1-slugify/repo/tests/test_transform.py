from textkit.transform import snake_case, title_case


def test_snake_case_splits_camel_case_and_punctuation():
    assert snake_case("userId") == "user_id"
    assert snake_case("HTTP server-error") == "http_server_error"
    assert snake_case("  already_snake  ") == "already_snake"


def test_title_case_keeps_minor_words_lower_inside():
    assert title_case("the lord of the rings") == "The Lord of the Rings"
    assert title_case("NASA and the moon") == "NASA and the Moon"

