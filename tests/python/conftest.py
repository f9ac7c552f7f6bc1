"""Shared fixtures of the Python tests: the module under test and the CLI built beside it.

ctest runs this suite with PYTHONPATH set to the build tree's package and SADDLE_CLI to the
program; run by hand: PYTHONPATH=build/python SADDLE_CLI=build/saddle python3 -m pytest tests/python
"""

import os
import subprocess

import pytest


def _cli_path():
    path = os.environ.get("SADDLE_CLI")
    if path:
        return path
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "..", "build", "saddle")


@pytest.fixture(scope="session")
def cli():
    """Runs the saddle program: cli(args...) -> CompletedProcess (text)."""
    path = _cli_path()
    if not os.path.exists(path):
        pytest.skip(f"saddle program not found at {path} (set SADDLE_CLI)")

    def run(*args):
        return subprocess.run([path, *args], capture_output=True, text=True, check=False)

    return run
