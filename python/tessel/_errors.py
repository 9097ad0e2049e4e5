"""Exceptions the tessel package raises."""


class CompileError(Exception):
    """A module did not compile.

    ``str(error)`` is every diagnostic, one per line, each located as
    ``file:line:column: error: message`` (for kernels translated from JAX,
    the file and line of the user's Python code). ``diagnostics`` holds the
    lines as a list.
    """

    def __init__(self, message: str, diagnostics: list[str] | None = None):
        super().__init__(message)
        self.diagnostics: list[str] = list(diagnostics or [message])
