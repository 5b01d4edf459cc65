"""The one exception this package raises for bad user input (the CLI turns it into exit code 2)."""


class InputError(ValueError):
    """Bad input: ``str(err)`` is one line naming the file, the field and the problem."""

    def __init__(self, source: str, field: str, problem: str):
        self.source, self.field, self.problem = str(source), str(field), str(problem)
        super().__init__(f"{self.source}: {self.field}: {self.problem}")
