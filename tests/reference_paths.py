"""Where the tests find published reference data.

``tests/data/pvsst_reference/`` is a byte-for-byte copy of ``shared/reference/``: the published per-trial
table and confirmatory analysis of the PV-SST core panel (Usman & Williamson, "Peer-Voted LLM-Agent
Stress Tests", arXiv 2608.20438; repository ranausmanai/synthetic-social-networks, commit 1ba07d5f) and
its frozen configuration. It is vendored so the suite runs in any checkout;
``tests/test_reference_copy.py`` checks the copy against ``shared/`` wherever that folder is present.
"""
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
REFERENCE = REPO / "tests" / "data" / "pvsst_reference"
PUBLISHED_RESULTS = REFERENCE / "pvsst_v1_core_results.csv"
PUBLISHED_ANALYSIS = REFERENCE / "pvsst_v1_core_confirmatory_analysis.csv"
PUBLISHED_CONFIG = REFERENCE / "pvsst_confirmatory_v1.yaml"
