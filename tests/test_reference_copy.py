"""The vendored PV-SST reference files equal the shared originals, byte for byte."""
import pytest
from reference_paths import REFERENCE, SHARED


@pytest.mark.skipif(not (SHARED / "reference").is_dir(), reason="shared/ is not beside this checkout")
def test_vendored_reference_matches_shared():
    names = sorted(p.name for p in (SHARED / "reference").iterdir())
    assert names == sorted(p.name for p in REFERENCE.iterdir())
    for name in names:
        assert (REFERENCE / name).read_bytes() == (SHARED / "reference" / name).read_bytes(), name
