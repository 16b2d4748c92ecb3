"""The one base of boardlab's errors: a caller (the CLI, a test, a script of yours) can
catch every error that names its cause in boardlab's terms with one except clause."""


class BoardlabError(Exception):
    """An error boardlab explains: its message names the file, field, board or service."""


class InputError(BoardlabError):
    """Bad input or usage: a file, field, name or argument a command cannot take. The
    command line says it in one line and exits 2, before anything is written or any
    board is powered."""
