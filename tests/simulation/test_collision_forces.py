"""The contact law of collision pairs and its linearly implicit form: symmetric PSD matrices, the
damping and stiffness the finite differences of the law give, forces that never pull, gradients."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxsim_like.simulation import ContactParams
from jaxsim_like.simulation.collision import Contacts, pair_forces

PARAMS = ContactParams.from_mass(2.0, max_penetration=0.003, friction=0.6)
SLIP = 0.01
FORCES = jax.jit(pair_forces)


def slots(depth, normal, active=None) -> Contacts:
    depth = jnp.asarray(depth, float)
    normal = jnp.asarray(normal, float)
    normal = normal / jnp.linalg.norm(normal, axis=-1, keepdims=True)
    count = depth.shape[0]
    return Contacts(
        link_a=jnp.zeros(count, jnp.int32), link_b=jnp.ones(count, jnp.int32), position=jnp.zeros((count, 3)),
        normal=normal, depth=depth, active=depth > 0 if active is None else jnp.asarray(active),
    )


RNG = np.random.default_rng(3)
NORMALS = RNG.normal(size=(6, 3))
DEPTHS = np.array([0.002, 0.001, 0.004, -0.001, 0.003, 0.0005])
# Pressing, sliding, separating fast (the force clipped to zero), apart, at rest, and one slot masked.
VELOCITIES = np.stack([
    -0.05 * NORMALS[0] / np.linalg.norm(NORMALS[0]),
    np.cross(NORMALS[1], [0.0, 0.0, 1.0]) * 0.5,
    5.0 * NORMALS[2] / np.linalg.norm(NORMALS[2]),
    RNG.normal(size=3),
    np.zeros(3),
    RNG.normal(size=3),
])
CONTACTS = slots(DEPTHS, NORMALS, active=[True, True, True, False, True, False])


def test_matrices_are_symmetric_positive_semidefinite_and_forces_never_pull():
    result = FORCES(PARAMS, CONTACTS, jnp.asarray(VELOCITIES), 1e-3, SLIP)
    matrices = np.asarray(result.matrices)
    np.testing.assert_allclose(matrices, np.swapaxes(matrices, 1, 2), atol=1e-9)
    assert np.linalg.eigvalsh(matrices).min() > -1e-9
    normal_part = np.einsum("ci,ci->c", np.asarray(result.forces), np.asarray(CONTACTS.normal))
    assert (normal_part >= 0).all() and normal_part[0] > 0 and normal_part[2] == 0
    np.testing.assert_array_equal(np.asarray(result.forces)[[3, 5]], 0.0)
    np.testing.assert_array_equal(matrices[[2, 3, 5]], 0.0)  # leaving fast, apart, masked: nothing held
    tangential = np.asarray(result.forces) - normal_part[:, None] * np.asarray(CONTACTS.normal)
    assert (np.linalg.norm(tangential, axis=1) <= float(PARAMS.friction) * normal_part + 1e-12).all()


def _law(depth, normal, velocity):
    """The force on a of one slot at ``depth``, from the law itself (dt plays no part in it)."""
    return pair_forces(PARAMS, slots(depth[None], normal[None]), velocity[None], 0.0, SLIP).forces[0]


def test_linearisation_is_the_derivative_of_the_law():
    n = NORMALS[0] / np.linalg.norm(NORMALS[0])
    t = np.cross(n, [0.0, 0.0, 1.0])
    t /= np.linalg.norm(t)
    depth, dt = 0.002, 1e-3
    law = jax.jit(_law)
    for velocity in (-0.05 * n, 0.0 * n):  # approaching, and at rest (zero slip)
        W = np.asarray(FORCES(PARAMS, slots([depth], [n]), jnp.asarray(velocity[None]), 0.0, SLIP).matrices[0])
        K_dt = np.asarray(FORCES(PARAMS, slots([depth], [n]), jnp.asarray(velocity[None]), dt, SLIP).matrices[0]) - W
        h = 1e-7
        for direction in (n, t):
            numeric = (law(depth, n, velocity + h * direction) - law(depth, n, velocity - h * direction)) / (2 * h)
            np.testing.assert_allclose(direction @ W @ direction, -np.asarray(numeric) @ direction, rtol=1e-6)
        deeper = (law(depth + h, n, 0 * n) - law(depth - h, n, 0 * n)) / (2 * h)  # C = -df/dx = df/d(depth) along n
        np.testing.assert_allclose(n @ K_dt @ n / dt, np.asarray(deeper) @ n, rtol=1e-6)
    # Sliding: the secant, whose force at the end of the step opposes the slip and is smaller.
    slide = 0.5 * t
    result = FORCES(PARAMS, slots([depth], [n]), jnp.asarray(slide[None]), dt, SLIP)
    after = np.asarray(result.step_forces[0] - result.matrices[0] @ (0.2 * slide - slide))
    before = np.asarray(result.forces[0])
    assert 0 < -(after @ t) < -(before @ t)


def test_gradients_match_finite_differences():
    def total(depth, velocity):
        result = pair_forces(PARAMS, slots(depth, NORMALS), velocity, 1e-3, SLIP)
        return jnp.sum(result.step_forces * jnp.arange(18.0).reshape(6, 3)) + jnp.sum(result.matrices)

    value = jax.jit(total)
    depth = jnp.asarray(np.abs(DEPTHS))
    velocity = jnp.asarray(VELOCITIES * 0.01)
    gradient = jax.jit(jax.grad(total, argnums=(0, 1)))
    gradients = gradient(depth, velocity)
    assert all(np.isfinite(np.asarray(g)).all() for g in gradients)
    h = 1e-9
    for k in range(6):
        e = jnp.zeros(6).at[k].set(h)
        np.testing.assert_allclose(gradients[0][k], (value(depth + e, velocity) - value(depth - e, velocity)) / (2 * h), rtol=1e-5)
    e = jnp.zeros((6, 3)).at[1, 0].set(1e-7)
    np.testing.assert_allclose(gradients[1][1, 0], (value(depth, velocity + e) - value(depth, velocity - e)) / 2e-7, rtol=1e-5)
    zero = gradient(jnp.zeros(6), jnp.zeros((6, 3)))  # at the boundary, at rest
    assert all(np.isfinite(np.asarray(g)).all() for g in zero)
