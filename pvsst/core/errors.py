"""The one exception this package raises for bad user input (the CLI turns it into exit code 2)."""


class InputError(ValueError):
    """Bad input: ``str(err)`` is one line naming the file, the field and the problem."""

    def __init__(self, source: str, field: str, problem: str):
        self.source, self.field, self.problem = str(source), str(field), str(problem)
        super().__init__(f"{self.source}: {self.field}: {self.problem}")


class RunStopped(Exception):
    """A run stopped from outside its input (a signal, an operating-system error while writing):
    ``str(err)`` is one line saying what stopped, what is kept and how to go on; ``exit_code`` is the
    command's exit status (130 Ctrl-C, 143 SIGTERM, 1 a failed write)."""

    def __init__(self, message: str, exit_code: int):
        self.exit_code = int(exit_code)
        super().__init__(message)
