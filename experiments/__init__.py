"""pvsst.experiments: specs, preregistration, design expansion, the runner, and the ``pvsst`` command."""
