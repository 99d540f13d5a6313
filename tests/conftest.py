"""Test-wide settings: float64, so that the dynamics can be compared with Pinocchio at 1e-9."""

import jax

jax.config.update("jax_enable_x64", True)
