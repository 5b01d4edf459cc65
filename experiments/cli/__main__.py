"""``python -m pvsst.experiments.cli``: the ``pvsst`` command."""
from pvsst.experiments.cli import main

main()
