"""Fixtures of the simulation tests: the models, one jitted rollout shared by every test, and
the record of the measured figures (printed at the end of the session).

The rollout takes the model, the state and the parameters as arguments and the number of steps
as a static one, so every test that simulates the same model with the same integrator, terrain
shape and horizon reuses one compilation (changing a mass, a friction, the gravity or the
terrain's normal never recompiles).
"""

from __future__ import annotations

import functools
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js

ASSETS = Path(__file__).resolve().parents[1] / "assets"

FIGURES: dict[str, str] = {}


def record(name: str, value: float, unit: str = "") -> float:
    """Keep a measured figure for the summary at the end of the session; returns ``value``."""
    FIGURES[name] = f"{value:.6g} {unit}".strip()
    return value


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ARG001
    if FIGURES:
        terminalreporter.section("simulation: measured figures")
        for name, value in FIGURES.items():
            terminalreporter.line(f"{name:60s} {value}")


@functools.partial(jax.jit, static_argnames=("steps", "at_com"))
def _simulate(model, state, params, torques, link_wrenches, *, steps, at_com):
    del steps
    return js.rollout(model, state, torques, params=params, link_wrenches=link_wrenches, link_wrenches_at_com=at_com)


def simulate(
    model: js.Model,
    state: js.State,
    params: js.SimulationParams,
    *,
    steps: int,
    torques=None,
    link_wrenches=None,
    at_com: bool = False,
) -> tuple[js.State, js.State, js.StepOutput]:
    """``steps`` steps (compiled once per model structure, integrator, terrain shape and horizon).

    ``torques`` is ``(n,)`` (held constant) or ``(steps, n)``; ``link_wrenches`` ``(N, 6)`` or
    ``(steps, N, 6)``. Returns the final state, the states after each step and the outputs.
    """
    dtype = state.joint_positions.dtype
    torques = jnp.zeros((steps, model.dofs), dtype) if torques is None else jnp.asarray(torques, dtype)
    if torques.ndim == 1:
        torques = jnp.broadcast_to(torques, (steps, model.dofs))
    if link_wrenches is not None:
        link_wrenches = jnp.asarray(link_wrenches, dtype)
        if link_wrenches.ndim == 2:
            link_wrenches = jnp.broadcast_to(link_wrenches, (steps, *link_wrenches.shape))
    final, (states, outputs) = _simulate(model, state, params, torques, link_wrenches, steps=steps, at_com=at_com)
    return final, states, outputs


@pytest.fixture(scope="session")
def sim():
    """The shared jitted rollout (see :func:`simulate`)."""
    return simulate


@pytest.fixture(scope="session")
def figures():
    """``record(name, value, unit)``: a figure printed in the session summary."""
    return record


def load(path) -> js.Model:
    """A model in float64 (the session enables ``jax_enable_x64``)."""
    assert jax.config.jax_enable_x64, "the simulation tests need float64 (jax_enable_x64)"
    model = js.load_model(path)
    assert model.link_mass.dtype == np.float64
    return model


@pytest.fixture(scope="session")
def box() -> js.Model:
    """``free_box``: 1 kg, 0.2 x 0.3 x 0.1 m, its 8 corners as collidable points."""
    return load(ASSETS / "free_box.urdf")


@pytest.fixture(scope="session")
def sphere() -> js.Model:
    """``sphere``: 1 kg, radius 0.1 m, 12 points on its surface (one at the bottom)."""
    return load(ASSETS / "sphere.urdf")


@pytest.fixture(scope="session")
def double_pendulum() -> js.Model:
    """Two 1 kg, 1 m rods on continuous joints, welded at z = 2.5 m."""
    return load(ASSETS / "double_pendulum.urdf")


@pytest.fixture(scope="session")
def quadruped() -> js.Model:
    """12 joints, floating base, 56 points on the feet and the trunk; stands at z = 0.42 m."""
    return load(ASSETS / "quadruped.urdf")


@pytest.fixture(scope="session")
def pendulum() -> js.Model:
    """The shipped pendulum: pivot at (0, 0.1, 1.5), 1 kg bob 1 m below, I_pivot = 1.00016 kg m^2."""
    return load(js.models.path("pendulum"))


@pytest.fixture(scope="session")
def humanoid() -> js.Model:
    """The shipped humanoid: 31 joints, 46.3 kg, stands with the pelvis at z = 1.03 m."""
    return load(js.models.path("humanoid"))
