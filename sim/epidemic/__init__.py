"""An influenza-like epidemic on a persona population whose reporting is drawn from a decision bank.

- :mod:`pvsst.sim.epidemic.settings`: :class:`EpidemicSettings`, the parameters with their sources.
- :mod:`pvsst.sim.epidemic.bank`: :class:`ReportingBank`, P(report) per cell x case level x household level.
- :mod:`pvsst.sim.epidemic.transmission`: transmission rates from r0 and the households.
- :mod:`pvsst.sim.epidemic.household_chain`: household-chained decisions on a static population.
- :mod:`pvsst.sim.epidemic.model`: :class:`EpidemicModel`, the Mesa model (one step = one day).
"""
