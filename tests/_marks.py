"""Helpers shared by the tests that check an error's line."""


def line_of(path, marker):
    """The line of file *path* holding *marker* (a comment at the user's statement),
    not counting lines that ask for it (``_line(...)`` calls)."""
    with open(path) as f:
        for n, text in enumerate(f.read().splitlines(), 1):
            if marker in text and "_line(" not in text:
                return n
    raise AssertionError(marker)
