"""Shared test configuration: this file puts ``tests/`` on ``sys.path``, so the helper modules beside it
(``reference_paths``, ``engine_helpers``, ``runner_helpers``, ...) import from any test, benchmarks included."""
