"""The one base of boardlab's errors: a caller (the CLI, a test, a script of yours) can
catch every error that names its cause in boardlab's terms with one except clause."""


class BoardlabError(Exception):
    """An error boardlab explains: its message names the file, field, board or service."""
