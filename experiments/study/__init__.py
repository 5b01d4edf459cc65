"""A study as a run-kernel job: open the frozen spec, plan its trials, ship blocks of them to workers.

``pvsst run`` and ``pvsst simulate`` call :func:`pvsst.experiments.study.runner.run_study`.
"""
