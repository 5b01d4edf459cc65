"""``python -m experiments.cli``: the ``pvsst`` command."""
from experiments.cli import main

main()
