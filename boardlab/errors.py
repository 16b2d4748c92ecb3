"""The one base of boardlab's errors: a caller (the CLI, a test, a script of yours) can
catch every error that names its cause in boardlab's terms with one except clause."""


class BoardlabError(Exception):
    """An error boardlab explains: its message names the file, field, board or service."""


class InputError(BoardlabError):
    """Bad input or usage: a file, field, name or argument a command cannot take. The
    command line says it in one line and exits 2, before anything is written or any
    board is powered."""


def one_line(e: Exception) -> str:
    """An error of a library as one line: a YAML error's problem and where it is (PyYAML's
    own text takes four lines and shows the line it quotes), else its first line."""
    mark, problem = getattr(e, "problem_mark", None), getattr(e, "problem", None)
    if mark is not None and problem:
        return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
