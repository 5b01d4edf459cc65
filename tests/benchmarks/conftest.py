"""Benchmarks print their measured ratios straight to the terminal, so `make test` shows them."""
import pytest


@pytest.fixture
def show(capsys):
    """``print`` that bypasses pytest's output capture."""
    def _show(*args, **kwargs):
        with capsys.disabled():
            print(*args, **kwargs)
    return _show
