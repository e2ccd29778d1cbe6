# slugify is looked up on the module so that, while it is missing, each test fails on its own
# instead of the whole file failing to import.
from textkit import transform


def test_slugify_lowercases_and_hyphenates():
    assert transform.slugify("Hello, World!") == "hello-world"


def test_slugify_folds_accents():
    assert transform.slugify("Crème Brûlée") == "creme-brulee"
