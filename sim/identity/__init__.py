"""Identity injection: per-layer vectors of demographic attribute values, measured on a local model.

:mod:`pvsst.sim.identity.extraction` measures them from persona cards and probe questions;
:mod:`pvsst.sim.identity.vectors` is the versioned artifact (``.npz`` with a JSON header) and builds a
call's control vector; :mod:`pvsst.sim.llm.steering` is what a steered request carries.
"""
