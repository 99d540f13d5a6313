"""Gradients of 200-step rollouts through contacts made and broken, against central finite differences.

The loss is a smooth function of the final state and of the trajectory. Its gradient with
respect to the initial state, the torques, the link masses and the friction coefficient (one
``jax.grad`` of a jitted rollout) is compared, group by group, with a directional central
difference along a random direction (Richardson-extrapolated from steps 1e-7 and 5e-8, so the
comparison is not limited by the curvature of the stiff contact dynamics).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.simulation import contact_forces

STEPS = 200
DT = 0.002
EPS = 1e-7
TOLERANCE = 1e-4
STATE_FIELDS = ("base_position", "base_quaternion", "base_velocity", "joint_positions", "joint_velocities", "contact_deformation")


def loss_and_contacts(state, torques, mass, friction, model, params):
    """A smooth scalar of the rollout, and which points touch at each step."""
    model = model.replace(link_mass=mass)
    params = params.replace(contact=params.contact.replace(friction=friction))
    final, (states, outputs) = js.rollout(model, state, torques, params=params)
    w = jnp.array([0.3, 0.6, 0.9])
    value = (
        jnp.sum(w * final.base_position)
        + 0.1 * jnp.sum(w * final.base_velocity[:3])
        + 0.05 * jnp.sum(final.base_velocity[3:])
        + 0.2 * jnp.sum(final.base_quaternion[1:])
        + jnp.mean(states.base_position[:, 2])
        + 0.3 * jnp.sum(jnp.sin(final.joint_positions))
        + 0.01 * jnp.sum(final.joint_velocities)
    )
    return value, outputs.in_contact


loss = jax.jit(loss_and_contacts)
gradient = jax.jit(jax.grad(lambda *args: loss_and_contacts(*args)[0], argnums=(0, 1, 2, 3)))


@dataclasses.dataclass
class Case:
    model: js.Model
    params: js.SimulationParams
    state: js.State
    torques: jax.Array

    @property
    def inputs(self) -> tuple[Any, ...]:
        return self.state, self.torques, self.model.link_mass, self.params.contact.friction

    def value(self, inputs) -> float:
        return float(loss(*inputs, self.model, self.params)[0])

    def in_contact(self) -> np.ndarray:
        return np.asarray(loss(*self.inputs, self.model, self.params)[1])

    def gradient(self):
        return gradient(*self.inputs, self.model, self.params)


def groups(case: Case) -> dict[str, tuple[int, str | None]]:
    """The input groups checked separately: (argument index, state field or None)."""
    named = {f"state.{name}": (0, name) for name in STATE_FIELDS if getattr(case.state, name).size}
    named.update({"torques": (1, None), "link_mass": (2, None), "friction": (3, None)})
    return {name: where for name, where in named.items() if np.size(get(case.inputs, where))}


def get(inputs, where):
    index, field = where
    return getattr(inputs[index], field) if field else inputs[index]


def put(inputs, where, value):
    """``inputs`` with the group ``where`` replaced by ``value``, typed as the leaf it replaces: a
    parameter built from a Python float (the friction) is weakly typed, and a strongly typed
    replacement would compile the loss a second time."""
    if getattr(get(inputs, where), "weak_type", False):
        value = jnp.asarray(float(value))
    index, field = where
    changed = list(inputs)
    changed[index] = inputs[index].replace(**{field: value}) if field else value
    return tuple(changed)


def directional_errors(case: Case, figures, label: str, seed: int) -> dict[str, float]:
    """Relative error of ``grad . u`` against the Richardson central difference, per group.

    The loss is only piecewise smooth (stick-slip switches, the normal force reaching zero while a
    body lifts off): a direction whose two central differences (steps ``EPS`` and ``EPS / 2``)
    disagree by more than ``10 TOLERANCE`` crosses such a kink and is replaced by another one
    (the curvature of the stiff contacts alone makes them disagree by up to 2e-4 along the
    quadruped's base position, which the extrapolation removes to 1e-7).
    """
    grads = case.gradient()
    for leaf in jax.tree.leaves(grads):
        assert np.isfinite(np.asarray(leaf)).all()
    rng = np.random.default_rng(seed)
    errors = {}
    for name, where in groups(case).items():
        x = np.asarray(get(case.inputs, where))

        def central(u, h):
            plus = case.value(put(case.inputs, where, jnp.asarray(x + h * u)))
            minus = case.value(put(case.inputs, where, jnp.asarray(x - h * u)))
            return (plus - minus) / (2 * h)

        for replaced in range(3):
            u = rng.normal(size=x.shape)
            coarse, fine = central(u, EPS), central(u, EPS / 2)
            if abs(coarse - fine) <= 10 * TOLERANCE * max(abs(coarse), abs(fine), 1e-9):
                break
        else:
            pytest.fail(f"{label}: the loss is not smooth around the point along 3 random directions of {name}")
        if replaced:
            figures(f"gradient {label}: {name} directions replaced (kinks)", replaced)
        numeric = (4 * fine - coarse) / 3
        analytic = float(np.sum(np.asarray(get(grads, where)) * u))
        scale = max(abs(analytic), abs(numeric))
        errors[name] = abs(analytic - numeric) / scale if scale > 1e-9 else 0.0
        figures(f"gradient {label}: {name} relative error", errors[name])
    return errors


def assert_contacts_made_and_broken(case: Case) -> None:
    touching = case.in_contact()
    made = int((~touching[:-1] & touching[1:]).sum())
    broken = int((touching[:-1] & ~touching[1:]).sum())
    assert made >= 3 and broken >= 2, f"contacts made {made} times and broken {broken} times"


def tilted_quaternion(angle: float, axis) -> np.ndarray:
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


@pytest.fixture(scope="module")
def bouncing_box(box) -> Case:
    """The box thrown down at the ground, tilted and spinning; a soft bounce (damping ratio 0.3)."""
    params = js.SimulationParams.build(box, dt=DT, contact=js.ContactParams.from_mass(1.0, damping_ratio=0.3))
    state = js.State.build(
        box,
        base_position=[0.0, 0.0, 0.12],
        base_quaternion=tilted_quaternion(0.3, [1.0, 2.0, 0.5]),
        base_velocity=[1.0, 0.3, -1.5, 2.0, -3.0, 1.0],
        contact_deformation=np.random.default_rng(3).normal(scale=1e-3, size=(len(box.point_link), 3)),
    )
    return Case(box, params, state, jnp.zeros((STEPS, 0)))


@pytest.fixture(scope="module")
def kicking_quadruped(quadruped) -> Case:
    """The quadruped thrown down at 1 m/s from 2 cm with its joints driven by 20 N m sines at 4 Hz (feet lift off
    and land). The joints start at 0.05 rad: at 0.1 rad the knees would start exactly on their
    upper limit, where the limit's damper blends in over 10 mrad and the loss curves too sharply
    for finite differences of 1e-7. From 3 cm a corner of the trunk grazes the ground for three
    steps, and the loss is not differentiable in the base position at that scale. The limits
    have the frequency 100 rad/s (the default is 200 at this step): at 200 the knees strike
    them harder and the loss curves more within a finite difference's step of the base
    position."""
    t = DT * np.arange(STEPS)[:, None]
    torques = 20.0 * np.sin(2 * np.pi * 4.0 * t + np.arange(quadruped.dofs)[None, :])
    state = js.State.build(
        quadruped, base_position=[0.0, 0.0, 0.44], base_velocity=[0.2, 0.0, -1.0, 0.0, 0.0, 0.3],
        joint_positions=np.full(quadruped.dofs, 0.05),
    )
    params = js.SimulationParams.build(quadruped, dt=DT, limit_frequency=100.0)
    return Case(quadruped, params, state, jnp.asarray(torques))


def test_bouncing_box_gradients_match_finite_differences(bouncing_box, figures):
    assert_contacts_made_and_broken(bouncing_box)
    errors = directional_errors(bouncing_box, figures, "box", seed=0)
    assert set(errors) >= {"state.base_position", "state.base_quaternion", "state.base_velocity", "link_mass", "friction"}
    assert max(errors.values()) < TOLERANCE, errors


def test_quadruped_gradients_match_finite_differences(kicking_quadruped, figures):
    assert_contacts_made_and_broken(kicking_quadruped)
    errors = directional_errors(kicking_quadruped, figures, "quadruped", seed=1)
    assert {"torques", "state.joint_positions", "state.joint_velocities"} <= set(errors)
    assert max(errors.values()) < TOLERANCE, errors


@pytest.mark.parametrize("height", [0.05, 0.045], ids=["exactly-at-the-boundary", "resting-depth"])
def test_gradients_are_finite_at_zero_velocity_and_at_the_contact_boundary(bouncing_box, height):
    """The box flat and still with its bottom corners exactly on the plane (penetration 0), or at
    its resting depth with zero tangential deformation (zero trial friction force)."""
    state = js.State.build(bouncing_box.model, base_position=[0.0, 0.0, height])
    case = dataclasses.replace(bouncing_box, state=state)
    if height == 0.05:
        assert (np.asarray(case.model.collidable_points)[:, 2] + height == 0).sum() == 4
    assert np.isfinite(case.value(case.inputs))
    for leaf in jax.tree.leaves(case.gradient()):
        assert np.isfinite(np.asarray(leaf)).all()


def test_contact_law_gradients_are_finite_everywhere():
    """Forces and deformation rates, differentiated with respect to every input and parameter, at
    depth exactly 0, just inside, just outside, with zero velocity and zero deformation."""
    params = js.ContactParams.from_mass(1.0)
    depth = jnp.array([0.0, 0.0, 1e-3, -1e-3, 1e-3, 0.0])
    normal = jnp.tile(jnp.array([0.0, 0.0, 1.0]), (6, 1))
    velocity = jnp.zeros((6, 3)).at[4].set([0.1, 0.0, -0.2]).at[5].set([0.0, 0.3, 0.0])
    deformation = jnp.zeros((6, 3)).at[1].set([1e-3, 0.0, 0.0])

    def total(params, depth, normal, velocity, deformation):
        forces, rates = contact_forces(params, depth, normal, velocity, deformation, jnp.ones(6, bool))
        return jnp.sum(forces**2) + jnp.sum(rates**2) + jnp.sum(forces)

    grad = jax.jit(jax.grad(total, argnums=(0, 1, 2, 3, 4)))
    for p, q in [(0.5, 0.5), (0.5, 0.0), (0.0, 0.0), (1.0, 1.0)]:
        exponents = params.replace(p=jnp.asarray(p), q=jnp.asarray(q))
        for leaf in jax.tree.leaves(grad(exponents, depth, normal, velocity, deformation)):
            assert np.isfinite(np.asarray(leaf)).all(), (p, q)
