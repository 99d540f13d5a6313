"""Two cylinders' contacts carry their least overlap (issue 29): the cylinder-cylinder narrow
phase's first slot takes what its slots and the cylinders' rim points miss of the two's
penetration depth (:mod:`~jaxsim_like.simulation.collision.least_overlap`), against the
brute-force least overlap over directions (:func:`test_ellipsoid_pairs.reference_of`). The
125-body pile with rocks ended with two cans lying side by side, 12.5 degrees apart, their ends
pressed 2.9 mm into each other (MuJoCo's collision at those poses: 2.90 mm), where the slots
reported 0.27 and 0.14 mm: the sides' slots faded past the caps, and the rim points lay beside
the deepest place. Float64."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from collision_worlds import solid
from test_ellipsoid_pairs import pose, reach, reference_of, rotation

from jaxsim_like.simulation.collision import KINDS, CollisionTable, Geometry, query
from jaxsim_like.simulation.collision.least_overlap import least_overlap

CAN = np.array([0.03, 0.03, 0.0])  # the pile's cylinders (radius, half length)
PILE_PAIR = (  # the pile's cylinders 51 and 75 at 3 s (benchmarks/pile.py --rocks, 125 bodies, seed 0)
    pose(rotation([0.5527222640130401, -0.684842965540156, -0.36206357305691544, -0.30724286888343494]),
         [-0.14634950680197045, -0.22481835142355455, 0.03593874924660799]),
    pose(rotation([0.4790841432301956, -0.4200763578399373, 0.5694277238591399, 0.5193903200772244]),
         [-0.17523439525161877, -0.2175830912172858, 0.08887158028438757]))


def overlap(H_a: np.ndarray, H_b: np.ndarray) -> float:
    """The two cans' least overlap [m] over the unit directions (brute force)."""
    return reference_of(lambda n: reach(H_b, CAN, n, "cylinder") + reach(H_a, CAN, -n, "cylinder"))[0]


@pytest.fixture(scope="module")
def pair_query():
    """The collision query of two cans (their slots and rim points), batched over pose pairs ``(K, 2, 4, 4)``."""
    cans = [solid(name, '<cylinder radius="0.03" length="0.06"/>', 0.2, 1e-4) for name in ("a", "b")]
    table = CollisionTable.build(cans)
    geometry = Geometry.of(cans, jnp.float64)
    return jax.jit(jax.vmap(lambda H: query(table, geometry, H)[0]))


def _carried(contacts) -> tuple[np.ndarray, np.ndarray]:
    """Per pose, the sum of the touching contacts' depths and the deepest [m]."""
    depth = np.where(np.asarray(contacts.active), np.maximum(np.asarray(contacts.depth), 0.0), 0.0)
    return depth.sum(axis=1), depth.max(axis=1)


def test_cans_pressed_end_to_end_side_by_side_carry_their_overlap(pair_query):
    """At the pile's pair the contacts carry the 2.90 mm the two overlap, to 0.1 mm, no one deeper;
    the first slot is the least overlap's, its normal nearly across both axes (side on side)."""
    H_a, H_b = PILE_PAIR
    reference = overlap(H_a, H_b)
    assert reference == pytest.approx(2.90e-3, abs=0.01e-3)
    carried, deepest = _carried(pair_query(jnp.asarray(np.stack([H_a, H_b]))[None]))
    assert reference - 1e-4 <= carried[0] and deepest[0] <= reference + 1e-9
    slots = KINDS["cylinder-cylinder"].kernel(*(jnp.asarray(x) for x in (H_a, CAN, H_b, CAN)))
    least = least_overlap(*(jnp.asarray(x) for x in (H_a, CAN, H_b, CAN)))
    assert float(least.depth[0]) == pytest.approx(reference, abs=1e-7)
    np.testing.assert_allclose(slots.normal[0], least.normal[0], atol=1e-12)
    assert abs(float(slots.normal[0] @ H_a[:3, 2])) < 0.2 and abs(float(slots.normal[0] @ H_b[:3, 2])) < 0.2


def test_random_touching_cans_carry_their_overlap(pair_query):
    """At 60 random poses of two cans overlapping 0.3 to 4.5 mm (any turn, any side), the touching
    contacts' depths add up to at least the least overlap less 0.5 mm (the first slot keeps a
    share of 5 % for the other slots' directions), and none is deeper than it by 0.5 mm."""
    rng = np.random.default_rng(7)
    poses, references = [], []
    while len(poses) < 60:
        H_a = pose(rotation(rng.normal(size=4) / 2), np.zeros(3))
        direction = rng.normal(size=3)
        H_b = pose(rotation(rng.normal(size=4) / 2), direction / np.linalg.norm(direction) * rng.uniform(0.03, 0.09))
        n = rng.normal(size=(4000, 3))
        n /= np.linalg.norm(n, axis=1, keepdims=True)
        if not 3e-4 < np.min(reach(H_b, CAN, n, "cylinder") + reach(H_a, CAN, -n, "cylinder")) < 5e-3:  # sampled: above the least
            continue
        reference = overlap(H_a, H_b)
        if 3e-4 < reference < 4.5e-3:
            poses.append(np.stack([H_a, H_b]))
            references.append(reference)
    carried, deepest = _carried(pair_query(jnp.asarray(np.stack(poses))))
    references = np.asarray(references)
    assert np.all(carried >= references - 5e-4), (references - carried).max()
    assert np.all(deepest <= references + 5e-4), (deepest - references).max()


def test_the_missed_depth_moves_with_the_cans_as_central_differences_see_it():
    """The first slot's depth at the pile's pair, differentiated along each translation of the
    upper can, equals central differences (1e-7 m steps) to 1e-6."""
    H_a, H_b = (jnp.asarray(H) for H in PILE_PAIR)
    kernel = KINDS["cylinder-cylinder"].kernel

    def depth(shift):
        return kernel(H_a, jnp.asarray(CAN), H_b.at[:3, 3].add(shift), jnp.asarray(CAN)).depth[0]

    gradient = jax.grad(depth)(jnp.zeros(3))
    step = 1e-7
    central = np.array([(depth(step * e) - depth(-step * e)) / (2 * step) for e in np.eye(3)])
    np.testing.assert_allclose(gradient, central, atol=1e-6)


def test_cans_apart_touch_nowhere(pair_query):
    """Two cans side by side 1 mm apart, one 0.6 m away (as two scenes of one world), and 20 at
    random turns with their centres 12 cm apart: no contact touches (a least overlap below zero
    carries nothing; at 0.6 m the first slot took 26 mm when what the slots missed was measured
    from their negative depths)."""
    rng = np.random.default_rng(3)
    poses = [np.stack([pose(np.eye(3), np.zeros(3)), pose(np.eye(3), [x, 0.0, 0.0])]) for x in (0.061, 0.6)]
    poses += [np.stack([pose(rotation(rng.normal(size=4)), np.zeros(3)), pose(rotation(rng.normal(size=4)), [0.12, 0.0, 0.0])])
              for _ in range(20)]
    carried, _ = _carried(pair_query(jnp.asarray(np.stack(poses))))
    np.testing.assert_array_equal(carried, 0.0)
