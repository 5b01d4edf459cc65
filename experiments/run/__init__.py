"""The run kernel: planned units -> skip the finished -> an executor -> the run store, the manifest, one summary.

It knows no job: a study's trials (:mod:`pvsst.experiments.study`), a study's counterfactual audit
(:mod:`pvsst.experiments.audit`), a survey's units (:mod:`pvsst.experiments.survey`) and a run's stance
judgments (:mod:`pvsst.experiments.judge`) each hand it a :class:`~pvsst.experiments.run.kernel.RunJob`
with a named worker.
"""
