"""Word frequencies."""


def top_words(text: str, n: int) -> list[tuple[str, int]]:
    """The n most frequent words of text, as (word, count), most frequent first."""
    raise NotImplementedError
