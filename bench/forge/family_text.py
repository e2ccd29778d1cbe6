"""The `wordsmith` family: small text utilities."""

from __future__ import annotations

from ops import Family, Op

OPS = (
    Op(
        name="collapse_spaces",
        module="clean",
        sig="def collapse_spaces(text: str) -> str:",
        does="replaces every run of whitespace (spaces, tabs, newlines) inside `text` by one space",
        edges='Leading and trailing whitespace is removed; text that is empty or only whitespace gives `""`.',
        hint="Think about what should happen at both ends of the text.",
        gold='''
def collapse_spaces(text: str) -> str:
    """Every run of whitespace becomes one space; the ends are stripped."""
    return " ".join(text.split())
''',
        edge_flaw='''
def collapse_spaces(text: str) -> str:
    """Every run of whitespace becomes one space; the ends are stripped."""
    return re.sub(r"\\s+", " ", text)
''',
        logic_flaw='''
def collapse_spaces(text: str) -> str:
    """Every run of whitespace becomes one space; the ends are stripped."""
    return text.replace("  ", " ")
''',
        imports=("import re",),
        main=(("'a   b\\t\\tc'", "'a b c'"), ("'one\\n\\ntwo three'", "'one two three'")),
        edge=(("'  padded  '", "'padded'"), ("' \\t '", "''"), ("''", "''")),
    ),
    Op(
        name="strip_prefix",
        module="clean",
        sig="def strip_prefix(text: str, prefix: str, *, ignore_case: bool = False) -> str:",
        does="returns `text` without `prefix` when `text` starts with it (removed once only), else `text` unchanged",
        edges="With `ignore_case=True` the prefix matches in any case; a prefix found elsewhere than at the start is left alone; an empty prefix changes nothing.",
        hint="Mind the keyword-only flag and prefixes that appear later in the text.",
        gold='''
def strip_prefix(text: str, prefix: str, *, ignore_case: bool = False) -> str:
    """`text` without one leading `prefix`."""
    head = text[: len(prefix)]
    if prefix and (head.lower() == prefix.lower() if ignore_case else head == prefix):
        return text[len(prefix) :]
    return text
''',
        edge_flaw='''
def strip_prefix(text: str, prefix: str, *, ignore_case: bool = False) -> str:
    """`text` without one leading `prefix`."""
    return text.replace(prefix, "", 1)
''',
        logic_flaw='''
def strip_prefix(text: str, prefix: str, *, ignore_case: bool = False) -> str:
    """`text` without one leading `prefix`."""
    while prefix and text.startswith(prefix):
        text = text[len(prefix) :]
    return text
''',
        main=(
            ("'re_re_name', 're_'", "'re_name'"),
            ("'v1.2', 'v'", "'1.2'"),
            ("'abc', 'x'", "'abc'"),
        ),
        edge=(
            ("'Mr. Smith', 'mr. ', ignore_case=True", "'Smith'"),
            ("'a_b_c', '_b'", "'a_b_c'"),
            ("'abc', ''", "'abc'"),
        ),
        kwarg="ignore_case",
        kwarg_alt="nocase",
    ),
    Op(
        name="swap_case_words",
        module="case",
        sig="def swap_case_words(text: str) -> str:",
        does="capitalises the first letter of every space-separated word of `text` and lower-cases the rest of it (`'hELLO wORLD'` -> `'Hello World'`)",
        edges='Runs of spaces are kept as they are; an empty string gives `""`; a word that starts with a digit keeps its digit and lower-cases the rest.',
        hint="Spacing must survive untouched.",
        gold='''
def swap_case_words(text: str) -> str:
    """Each space-separated word capitalised, spacing kept."""
    return " ".join(word[:1].upper() + word[1:].lower() for word in text.split(" "))
''',
        edge_flaw='''
def swap_case_words(text: str) -> str:
    """Each space-separated word capitalised, spacing kept."""
    return " ".join(word[:1].upper() + word[1:].lower() for word in text.split())
''',
        logic_flaw='''
def swap_case_words(text: str) -> str:
    """Each space-separated word capitalised, spacing kept."""
    return text.swapcase()
''',
        main=(("'hELLO wORLD'", "'Hello World'"), ("'the quick FOX'", "'The Quick Fox'")),
        edge=(("'a  b'", "'A  B'"), ("''", "''"), ("'3RD place'", "'3rd Place'")),
    ),
    Op(
        name="camel_to_snake",
        module="case",
        sig="def camel_to_snake(name: str) -> str:",
        does="turns a camelCase or PascalCase identifier into snake_case (`'parseHttpResponse'` -> `'parse_http_response'`)",
        edges="A run of capitals is one word (`'HTTPServer'` -> `'http_server'`, `'getID'` -> `'get_id'`); a name already in snake_case is returned unchanged.",
        hint="Acronyms written in capitals are the tricky part.",
        gold='''
def camel_to_snake(name: str) -> str:
    """camelCase / PascalCase -> snake_case; capital runs are one word."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\\1_\\2", name)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\\1_\\2", name)
    return name.lower()
''',
        edge_flaw='''
def camel_to_snake(name: str) -> str:
    """camelCase / PascalCase -> snake_case; capital runs are one word."""
    return re.sub(r"(?<!^)([A-Z])", r"_\\1", name).lower()
''',
        logic_flaw='''
def camel_to_snake(name: str) -> str:
    """camelCase / PascalCase -> snake_case; capital runs are one word."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\\1_\\2", name)
''',
        imports=("import re",),
        main=(("'parseHttpResponse'", "'parse_http_response'"), ("'UserName'", "'user_name'")),
        edge=(
            ("'HTTPServer'", "'http_server'"),
            ("'getID'", "'get_id'"),
            ("'already_snake'", "'already_snake'"),
        ),
    ),
    Op(
        name="count_vowels",
        module="measure",
        sig="def count_vowels(text: str, *, include_y: bool = False) -> int:",
        does="counts the vowels a, e, i, o, u in `text`, in either case",
        edges="With `include_y=True`, y and Y count as vowels too; non-letters never count and an empty text gives 0.",
        hint="Upper case letters and the optional flag both matter.",
        gold='''
def count_vowels(text: str, *, include_y: bool = False) -> int:
    """How many vowels `text` holds (y too when `include_y`)."""
    vowels = "aeiouy" if include_y else "aeiou"
    return sum(1 for ch in text.lower() if ch in vowels)
''',
        edge_flaw='''
def count_vowels(text: str, *, include_y: bool = False) -> int:
    """How many vowels `text` holds (y too when `include_y`)."""
    return sum(1 for ch in text.lower() if ch in "aeiou")
''',
        logic_flaw='''
def count_vowels(text: str, *, include_y: bool = False) -> int:
    """How many vowels `text` holds (y too when `include_y`)."""
    vowels = "aeiouy" if include_y else "aeiou"
    return sum(1 for ch in text if ch in vowels)
''',
        main=(("'Hello World'", "3"), ("'AEIOU'", "5")),
        edge=(("'rhythm', include_y=True", "1"), ("'Yay', include_y=True", "3"), ("''", "0")),
        kwarg="include_y",
        kwarg_alt="with_y",
    ),
    Op(
        name="longest_word",
        module="measure",
        sig="def longest_word(text: str) -> str:",
        does="returns the longest space-separated word of `text`",
        edges='On a tie the first such word wins; an empty or blank text gives `""`.',
        hint="Ties and blank input need a defined answer.",
        gold='''
def longest_word(text: str) -> str:
    """The longest word; the first one on a tie; "" for blank text."""
    best = ""
    for word in text.split():
        if len(word) > len(best):
            best = word
    return best
''',
        edge_flaw='''
def longest_word(text: str) -> str:
    """The longest word; the first one on a tie; "" for blank text."""
    best = ""
    for word in text.split():
        if len(word) >= len(best):
            best = word
    return best
''',
        logic_flaw='''
def longest_word(text: str) -> str:
    """The longest word; the first one on a tie; "" for blank text."""
    words = text.split()
    return max(words, key=len)[:-1] if words else ""
''',
        main=(("'a quick brownish fox'", "'brownish'"), ("'hello'", "'hello'")),
        edge=(("'abc xyz'", "'abc'"), ("''", "''"), ("'   '", "''")),
    ),
    Op(
        name="split_pairs",
        module="split",
        sig='def split_pairs(text: str, sep: str = ",") -> dict[str, str]:',
        does="parses `'k1=v1,k2=v2'` into `{'k1': 'v1', 'k2': 'v2'}`, keys and values stripped of surrounding spaces",
        edges="Empty items (`'a=1,,b=2'`) are skipped; a value may itself contain `=` (only the first `=` splits); an item without `=` raises `ValueError`.",
        hint="Be strict about malformed items but forgiving about empty ones.",
        gold='''
def split_pairs(text: str, sep: str = ",") -> dict[str, str]:
    """'k=v,k2=v2' -> dict; empty items skipped; ValueError on an item without '='."""
    pairs = {}
    for item in text.split(sep):
        if not item.strip():
            continue
        if "=" not in item:
            raise ValueError(f"not a key=value item: {item!r}")
        key, value = item.split("=", 1)
        pairs[key.strip()] = value.strip()
    return pairs
''',
        edge_flaw='''
def split_pairs(text: str, sep: str = ",") -> dict[str, str]:
    """'k=v,k2=v2' -> dict; empty items skipped; ValueError on an item without '='."""
    pairs = {}
    for item in text.split(sep):
        if "=" in item:
            key, value = item.split("=")[:2]
            pairs[key.strip()] = value.strip()
    return pairs
''',
        logic_flaw='''
def split_pairs(text: str, sep: str = ",") -> dict[str, str]:
    """'k=v,k2=v2' -> dict; empty items skipped; ValueError on an item without '='."""
    pairs = {}
    for item in text.split(sep):
        if not item.strip():
            continue
        if "=" not in item:
            raise ValueError(f"not a key=value item: {item!r}")
        key, value = item.split("=", 1)
        pairs[key] = value
    return pairs
''',
        main=(
            ("'a=1, b = 2'", "{'a': '1', 'b': '2'}"),
            ("'x=y;z=w', sep=';'", "{'x': 'y', 'z': 'w'}"),
        ),
        edge=(
            ("'a=1,,b=2'", "{'a': '1', 'b': '2'}"),
            ("'url=a=b'", "{'url': 'a=b'}"),
            ("'broken'", "raises:ValueError"),
        ),
        kwarg="sep",
        kwarg_alt="delimiter",
    ),
    Op(
        name="split_sentences",
        module="split",
        sig="def split_sentences(text: str) -> list[str]:",
        does="splits `text` into sentences ending in `.`, `!` or `?` (the mark kept, surrounding spaces stripped)",
        edges="A trailing fragment without a final mark is kept as the last sentence; runs of marks (`'Wait...'`, `'What?!'`) end one sentence; blank text gives `[]`.",
        hint="Not every text ends neatly with a full stop.",
        gold='''
def split_sentences(text: str) -> list[str]:
    """Sentences ending in . ! or ?, marks kept; a trailing fragment kept."""
    parts = re.findall(r"[^.!?]+[.!?]+|[^.!?]+$", text)
    return [p.strip() for p in parts if p.strip()]
''',
        edge_flaw='''
def split_sentences(text: str) -> list[str]:
    """Sentences ending in . ! or ?, marks kept; a trailing fragment kept."""
    return [p.strip() for p in re.findall(r"[^.!?]+[.!?]", text)]
''',
        logic_flaw='''
def split_sentences(text: str) -> list[str]:
    """Sentences ending in . ! or ?, marks kept; a trailing fragment kept."""
    return [p.strip() for p in re.split(r"[.!?]+", text) if p.strip()]
''',
        imports=("import re",),
        main=(("'Hi there. How are you? Fine!'", "['Hi there.', 'How are you?', 'Fine!']"),),
        edge=(
            ("'One. Two'", "['One.', 'Two']"),
            ("'Wait... What?!'", "['Wait...', 'What?!']"),
            ("'   '", "[]"),
        ),
    ),
    Op(
        name="center_text",
        module="pad",
        sig='def center_text(text: str, width: int, fill: str = " ") -> str:',
        does="centres `text` in a field of `width` characters padded with `fill`; when the padding is odd the extra character goes on the right",
        edges="Text already as wide or wider than `width` is returned unchanged; `fill` must be exactly one character (else `ValueError`).",
        hint="Odd padding, overlong text and bad fill characters all have a defined answer.",
        gold='''
def center_text(text: str, width: int, fill: str = " ") -> str:
    """`text` centred in `width` columns; extra padding on the right."""
    if len(fill) != 1:
        raise ValueError("fill must be one character")
    total = max(width - len(text), 0)
    left = total // 2
    return fill * left + text + fill * (total - left)
''',
        edge_flaw='''
def center_text(text: str, width: int, fill: str = " ") -> str:
    """`text` centred in `width` columns; extra padding on the right."""
    total = max(width - len(text), 0)
    left = total // 2
    return fill * left + text + fill * (total - left)
''',
        logic_flaw='''
def center_text(text: str, width: int, fill: str = " ") -> str:
    """`text` centred in `width` columns; extra padding on the right."""
    if len(fill) != 1:
        raise ValueError("fill must be one character")
    total = max(width - len(text), 0)
    right = total // 2
    return fill * (total - right) + text + fill * right
''',
        main=(("'ab', 6, '*'", "'**ab**'"), ("'ab', 5, fill='-'", "'-ab--'")),
        edge=(
            ("'abcdef', 3", "'abcdef'"),
            ("'x', 3, fill='--'", "raises:ValueError"),
            ("'x', 3, ''", "raises:ValueError"),
        ),
        kwarg="fill",
        kwarg_alt="pad",
    ),
    Op(
        name="indent_lines",
        module="pad",
        sig='def indent_lines(text: str, prefix: str = "    ") -> str:',
        does="puts `prefix` in front of every line of `text` (lines split on `\\n`)",
        edges="Blank lines (empty or only whitespace) get no prefix; a final newline is kept, and does not create an extra indented line.",
        hint="Blank lines and the text's last newline deserve care.",
        gold='''
def indent_lines(text: str, prefix: str = "    ") -> str:
    """Each non-blank line prefixed; a final newline kept."""
    return "".join(
        prefix + line if line.strip() else line for line in text.splitlines(keepends=True)
    )
''',
        edge_flaw='''
def indent_lines(text: str, prefix: str = "    ") -> str:
    """Each non-blank line prefixed; a final newline kept."""
    return "\\n".join(prefix + line for line in text.split("\\n"))
''',
        logic_flaw='''
def indent_lines(text: str, prefix: str = "    ") -> str:
    """Each non-blank line prefixed; a final newline kept."""
    return prefix + text
''',
        main=(("'a\\nb', '> '", "'> a\\n> b'"), ("'x\\ny\\nz', prefix='--'", "'--x\\n--y\\n--z'")),
        edge=(("'a\\n\\nb', '> '", "'> a\\n\\n> b'"), ("'a\\n', '> '", "'> a\\n'"), ("''", "''")),
        kwarg="prefix",
        kwarg_alt="indent",
    ),
)

FAMILY = Family(
    package="wordsmith",
    about="small text utilities: cleaning, case, measuring, splitting and padding strings",
    modules=(
        ("clean", "Cleaning text: whitespace and prefixes."),
        ("case", "Changing the case of words and identifiers."),
        ("measure", "Measuring text: counts and extremes."),
        ("split", "Splitting text into parts."),
        ("pad", "Padding and indenting text."),
    ),
    ops=OPS,
)
