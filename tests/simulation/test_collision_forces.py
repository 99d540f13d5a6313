"""The contact law of collision pairs (the terrain's law with tangential memory, sized per
contact) and its linearly implicit form: symmetric PSD matrices, the damping and stiffness the
finite differences of the law give, forces that never pull and stay in the cone, a sticking
contact that holds a load without moving, the sizing, gradients."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxsim_like.simulation import ContactParams
from jaxsim_like.simulation.collision import Contacts, PairLaw, pair_forces
from jaxsim_like.simulation.contacts import implicit_deformation

PARAMS = ContactParams.from_mass(2.0, max_penetration=0.003, friction=0.6)
FORCES = jax.jit(pair_forces, static_argnums=6)


def slots(depth, normal, active=None) -> Contacts:
    depth = jnp.asarray(depth, float)
    normal = jnp.asarray(normal, float)
    normal = normal / jnp.linalg.norm(normal, axis=-1, keepdims=True)
    count = depth.shape[0]
    return Contacts(
        link_a=jnp.zeros(count, jnp.int32), link_b=jnp.ones(count, jnp.int32), position=jnp.zeros((count, 3)),
        normal=normal, depth=depth, active=depth > 0 if active is None else jnp.asarray(active),
        slot=jnp.arange(count, dtype=jnp.int32),
    )


def linearised(contacts, velocity, deformation=None, dt=1e-3, mass=1.0):
    deformation = jnp.zeros_like(velocity) if deformation is None else deformation
    return FORCES(PARAMS, contacts, velocity, deformation, dt, jnp.full(contacts.depth.shape, mass), 2)


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
    result = linearised(CONTACTS, jnp.asarray(VELOCITIES))
    matrices = np.asarray(result.matrices)
    np.testing.assert_allclose(matrices, np.swapaxes(matrices, 1, 2), atol=1e-9)
    assert np.linalg.eigvalsh(matrices).min() > -1e-9
    forces = np.asarray(result.law.forces)
    normal_part = np.einsum("ci,ci->c", forces, np.asarray(CONTACTS.normal))
    assert (normal_part >= 0).all() and normal_part[0] > 0 and normal_part[2] == 0
    np.testing.assert_array_equal(forces[[3, 5]], 0.0)
    np.testing.assert_array_equal(matrices[[2, 3, 5]], 0.0)  # leaving fast, apart, masked: nothing held
    tangential = forces - normal_part[:, None] * np.asarray(CONTACTS.normal)
    assert (np.linalg.norm(tangential, axis=1) <= float(PARAMS.friction) * normal_part + 1e-12).all()


def _law(depth, normal, velocity, deformation):
    """The force on a of one slot at ``depth``, from the law itself (dt plays no part in it)."""
    return linearised(slots(depth[None], normal[None]), velocity[None], deformation[None], 0.0).law.forces[0]


def test_linearisation_is_the_derivative_of_the_law():
    n = NORMALS[0] / np.linalg.norm(NORMALS[0])
    t = np.cross(n, [0.0, 0.0, 1.0])
    t /= np.linalg.norm(t)
    depth, dt, zero = 0.002, 1e-3, np.zeros(3)
    law = jax.jit(_law)
    h = 1e-7
    for velocity in (-0.05 * n, 0.0 * n):  # approaching, and at rest (sticking)
        one = slots([depth], [n])
        W = np.asarray(linearised(one, jnp.asarray(velocity[None]), dt=0.0).matrices[0])
        K_dt = np.asarray(linearised(one, jnp.asarray(velocity[None]), dt=dt).matrices[0]) - W
        for direction in (n, t):
            numeric = (law(depth, n, velocity + h * direction, zero) - law(depth, n, velocity - h * direction, zero)) / (2 * h)
            np.testing.assert_allclose(direction @ W @ direction, -np.asarray(numeric) @ direction, rtol=1e-6)
        deeper = (law(depth + h, n, 0 * n, zero) - law(depth - h, n, 0 * n, zero)) / (2 * h)  # C = -df/dx = df/d(depth) along n
        np.testing.assert_allclose(n @ K_dt @ n / dt, np.asarray(deeper) @ n, rtol=1e-6)
        # Across the normal, C = -df/dm: the deformation moves with the point while it sticks.
        sheared = (law(depth, n, 0 * n, h * t) - law(depth, n, 0 * n, -h * t)) / (2 * h)
        np.testing.assert_allclose(t @ K_dt @ t / dt, -np.asarray(sheared) @ t, rtol=1e-6)
    # Sliding fast: the Coulomb force is kept along the slip, and the force never grows.
    slide = 0.5 * t
    result = linearised(slots([depth], [n]), jnp.asarray(slide[None]), dt=dt)
    after = np.asarray(result.step_forces[0] - result.resist(jnp.asarray((0.2 * slide - slide)[None]))[0])
    before = np.asarray(result.law.forces[0])
    assert 0 < -(after @ t) <= -(before @ t) + 1e-12


def test_a_sticking_contact_holds_a_load_inside_its_cone_without_moving():
    """A point mass pressed on by its weight and pushed along the surface at half its friction
    bound: the linearly implicit steps bring it to rest, and the tangential force then equals
    the push exactly with no slip (the memory carries it), at 1 and 5 ms."""
    n = np.array([0.0, 0.0, 1.0])
    mass, g = 0.5, 9.81
    one = slots([1e-3], [n])
    for dt in (1e-3, 5e-3):
        push = 0.5 * float(PARAMS.friction) * mass * g
        load = jnp.asarray([[push, 0.0, -mass * g]])

        def step(carry, _):
            x, v, m = carry
            contacts = one.replace(depth=jnp.asarray([-x]), active=jnp.asarray([x < 0]))
            result = FORCES(PARAMS, contacts, v, m, dt, jnp.full(1, mass), 2)
            # (m + h A) dv = h (f_ext + step_forces), one slot, one point mass.
            A = mass * jnp.eye(3) + dt * result.matrices[0]
            dv = jnp.linalg.solve(A, dt * (load[0] + result.step_forces[0]))[None]
            m_next = implicit_deformation(PARAMS, result, contacts.normal, m, v + dv, dt)
            v = v + dv
            return (x + dt * v[0, 2], v, m_next), v[0, 0]

        (x, v, m), tangential = jax.jit(lambda c: jax.lax.scan(step, c, None, 2000))((jnp.asarray(-1e-3), jnp.zeros((1, 3)), jnp.zeros((1, 3))))
        assert np.abs(np.asarray(tangential)[-1000:]).max() < 1e-12  # stuck: not even a creep
        assert float(jnp.abs(v).max()) < 1e-12


def test_the_law_of_a_pair_is_sized_for_its_effective_mass():
    """A body of the contact's effective mass on four contacts sinks by ``max_penetration``."""
    law = PairLaw.build(max_penetration=5e-4, damping_ratio=1.0)
    mass = jnp.asarray([0.5, 2.0])
    params = law.contact_params(mass, jnp.asarray([0.7, 0.7]))
    depth = 5e-4
    weight_share = np.asarray(mass) * 9.81 / 4
    np.testing.assert_allclose(np.asarray(params.stiffness) * depth**1.5, weight_share, rtol=1e-12)
    linear = 1.5 * np.asarray(params.stiffness) * depth**0.5
    np.testing.assert_allclose(np.asarray(params.damping) * depth**0.5, 2 * np.sqrt(linear * np.asarray(mass) / 4), rtol=1e-12)
    with pytest.raises(ValueError, match="max_penetration > 0"):
        PairLaw.build(max_penetration=0.0)


def test_gradients_match_finite_differences():
    memory = jnp.asarray(np.random.default_rng(4).normal(size=(6, 3)) * 1e-4)

    def total(depth, velocity):
        result = linearised(slots(depth, NORMALS), velocity, memory)
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


@pytest.mark.parametrize("links", [12, 300])
def test_rows_share_a_label_exactly_when_they_touch_the_same_two_links(links):
    """``row_link_pairs`` labels rows by their pair of links (either order), by the pair's key
    below ``LINK_PAIR_KEYS`` pairs of links and by a sort above (300 links): two rows share a
    label exactly when they touch the same two links, and every label is below the count."""
    from jaxsim_like.simulation.collision.forces import LINK_PAIR_KEYS, row_link_pairs

    rng = np.random.default_rng(0)
    a, b = rng.integers(0, links, 64), rng.integers(0, links, 64)
    a[10:20], b[10:20] = b[0:10], a[0:10]  # the same pairs, the other way round
    rows = slots(np.full(64, 0.001), np.tile([0.0, 0.0, 1.0], (64, 1))).replace(
        link_a=jnp.asarray(a, jnp.int32), link_b=jnp.asarray(b, jnp.int32))
    label, count = row_link_pairs(rows, links)
    label = np.asarray(label)
    pair = np.minimum(a, b) * links + np.maximum(a, b)
    assert (count == links * links) == (links * links <= LINK_PAIR_KEYS)
    assert np.all((label >= 0) & (label < count))
    assert np.array_equal(label[:, None] == label[None, :], pair[:, None] == pair[None, :])
