"""Test-wide settings: float64, so that the dynamics can be compared with Pinocchio at 1e-9, and
subprocesses that import this checkout's package, whether or where it is installed."""

import os
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

REPOSITORY = Path(__file__).resolve().parents[1]
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")]))
