"""Gradients of ABA and RNEA with respect to the state, torques or accelerations, external
wrenches and model parameters (masses, inertias, joint placements) against finite differences
(``jax.test_util.check_grads``, forward and reverse mode, order 1), at random states and at rest
at the identity orientation, where a NaN in any partial derivative would fail the check.

Order 1: the reverse-over-reverse graphs of order 2 take about a minute to compile even for the
free box, more than the whole budget of this suite.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import jaxsim_like as js
from jaxsim_like import dynamics as D

from .conftest import Case

# (asset, floating base, velocity representation)
GRADIENT_CASES = [("double_pendulum", False, "mixed"), ("cart_pole", False, "inertial"), ("free_box", True, "body"), ("quadruped", True, "mixed")]


def load(asset: str, floating: bool) -> js.Model:
    return js.load_model(Case(asset, floating).path, floating_base=floating)


def dynamics_function(model: js.Model, rep: str) -> Callable[[dict], jax.Array]:
    """``p -> [ABA (base, joints); RNEA (base, joints)]`` of a model with parameters from ``p``.

    Masses and inertias enter relative to the model's: ``m (1 + mass_scale)`` and
    ``I + inertia_change * trace(I) / 3`` (link axes), so that a finite-difference step perturbs
    every link alike; joint placements (``joint_transform``, metres) enter as they are.
    """

    def dynamics(p: dict) -> jax.Array:
        unit = jnp.trace(model.link_inertia, axis1=1, axis2=2)[:, None, None] / 3
        m = model.replace(
            link_mass=model.link_mass * (1 + p["mass_scale"]),
            link_inertia=model.link_inertia + p["inertia_change"] * unit,
            joint_transform=p["joint_transform"],
        )
        base = {}
        if model.floating_base:
            base = {"base_position": p["base_position"], "base_quaternion": p["base_quaternion"], "base_velocity": p["base_velocity"]}
        state = js.State.build(
            m, joint_positions=p["joint_positions"], joint_velocities=p["joint_velocities"], velocity_representation=rep, **base
        )
        aba = D.forward_dynamics(m, state, joint_torques=p["joint_torques"], link_wrenches=p["link_wrenches"])
        rnea = D.inverse_dynamics(
            m,
            state,
            base_acceleration=p.get("base_acceleration"),
            joint_accelerations=p["joint_accelerations"],
            link_wrenches=p["link_wrenches"],
        )
        return jnp.concatenate([*aba, *rnea])

    return dynamics


def parameters(model: js.Model, rng: np.random.Generator | None) -> dict:
    """Random differentiable inputs (``rng=None``: at rest, identity orientation, zero inputs)."""
    n, N = model.dofs, model.number_of_links

    def draw(*shape: int, scale: float = 1.0) -> jax.Array:
        return jnp.asarray(rng.normal(size=shape) * scale if rng is not None else np.zeros(shape))

    p = {
        "joint_positions": draw(n),
        "joint_velocities": draw(n),
        "joint_torques": draw(n),
        "joint_accelerations": draw(n),
        "link_wrenches": draw(N, 6),
        "mass_scale": draw(N, scale=0.1),
        "inertia_change": draw(N, 3, 3, scale=0.1),
        "joint_transform": model.joint_transform,
    }
    if model.floating_base:
        quaternion = np.array([1.0, 0.0, 0.0, 0.0]) if rng is None else rng.normal(size=4)
        p |= {
            "base_position": draw(3),
            "base_quaternion": jnp.asarray(quaternion / np.linalg.norm(quaternion)),
            "base_velocity": draw(6),
            "base_acceleration": draw(6),
        }
    return p


@pytest.fixture(scope="module", params=GRADIENT_CASES, ids=lambda c: f"{c[0]}-{c[2]}")
def gradient_case(request):
    """A model, its representation and the jitted dynamics (compiled once for both points)."""
    asset, floating, rep = request.param
    model = load(asset, floating)
    return model, jax.jit(dynamics_function(model, rep))


@pytest.mark.parametrize("at_rest", [False, True], ids=["random", "rest"])
def test_check_grads(gradient_case, at_rest):
    """Random state and inputs, or at rest: zero velocities, torques, wrenches and joint positions,
    identity orientation."""
    model, dynamics = gradient_case
    p = parameters(model, None if at_rest else np.random.default_rng(7))
    values = dynamics(p)
    assert np.all(np.isfinite(np.asarray(values)))
    check_grads(dynamics, (p,), order=1, modes=("fwd", "rev"))
