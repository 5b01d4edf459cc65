"""No tracked file shares a run of six words with the PV-SST reference code's
prompt and persona texts (its authors' wording).

``tests/data/reference-shingles.txt`` holds only hashes (the first 16 hex digits of the sha256 of each
six-word run of those texts, words as ``[a-z0-9']+`` of the lower-cased text), never the text: the same
list and the same rule as the project's before-stop hook (``/work/shared/hooks``), with which it is
compared where that copy is present.
"""
from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HASHES = Path(__file__).with_name("data") / "reference-shingles.txt"
SHARED_HASHES = Path("/work/shared/hooks/reference-shingles.txt")
CHECKED = re.compile(r"\.(py|txt|md|ya?ml|csv|json|tmpl|html|j2)$")


def shared_runs(text: str, reference: set[str]) -> int:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return sum(hashlib.sha256(" ".join(words[i:i + 6]).encode()).hexdigest()[:16] in reference
               for i in range(len(words) - 5))


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [name for name in listed.stdout.split() if CHECKED.search(name)]


def test_no_tracked_file_shares_six_words_with_the_reference_texts():
    reference = set(HASHES.read_text().split())
    assert len(reference) > 500
    files = tracked_files()
    assert "sim/materials/pvsst/post.txt" in files
    hits = {}
    for name in files:
        path = ROOT / name
        if path.is_file():
            n = shared_runs(path.read_text(errors="ignore"), reference)
            if n:
                hits[name] = n
    assert hits == {}


def test_the_check_finds_a_shared_run():
    # a run whose hash is in the list must be found: take a known-bad six-word run from the test's own
    # hash of a phrase we construct, to show the detector counts what it should
    reference = {hashlib.sha256(b"one two three four five six").hexdigest()[:16]}
    assert shared_runs("One, two; three four five six seven", reference) == 1
    assert shared_runs("one two three four five seven", reference) == 0


@pytest.mark.skipif(not SHARED_HASHES.is_file(), reason="the shared hook's copy exists only on the project machine")
def test_vendored_hash_list_equals_the_hooks_copy():
    assert set(HASHES.read_text().split()) == set(SHARED_HASHES.read_text().split())
