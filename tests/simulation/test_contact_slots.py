"""Contact slots: the slot counts chosen from the geometry, the choice of the deepest points, the
per-link sums, and the step they give: the same as every point a slot while no link has more
points touching than slots, stable when it has (float64)."""

from __future__ import annotations

from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.parsers.shapes import fibonacci_sphere
from jaxsim_like.simulation import contact_slots, contacts, model_step
from jaxsim_like.simulation.step import contact_point_positions

PLATE = """<robot name="plate"><link name="plate">
  <inertial><mass value="{mass}"/><inertia ixx="{inertia}" iyy="{inertia}" izz="{inertia}" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><box size="0.2 0.2 0.02"/></geometry></collision></link></robot>"""
CAN = """<robot name="can"><link name="can">
  <inertial><mass value="1"/><inertia ixx="0.0039" iyy="0.0039" izz="0.00125" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><cylinder radius="0.05" length="0.2"/></geometry></collision></link></robot>"""


def _cylinder_rings(radius: float, length: float, samples: int) -> np.ndarray:
    angles = 2 * np.pi * np.arange(samples) / samples
    ring = np.stack([radius * np.cos(angles), radius * np.sin(angles), np.zeros(samples)], axis=1)
    return np.concatenate([ring + [0, 0, length / 2], ring - [0, 0, length / 2]])


def test_facet_counts_follow_the_geometry():
    """The most points within the tolerance of one supporting plane: a box's 4 corners, a cylinder
    of two rings of 8 standing on a cap (8), a sphere on 3, and every point of a flat plate."""
    corners = np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.15, 0.15) for z in (-0.05, 0.05)])
    assert contact_slots.facet_count(corners, 0.005) == 4
    assert contact_slots.facet_count(_cylinder_rings(0.05, 0.3, 8), 0.005) == 8
    assert contact_slots.facet_count(0.1 * fibonacci_sphere(12), 0.005) == 3
    plate = np.array([[x, y, 0.0] for x in np.linspace(-0.1, 0.1, 5) for y in np.linspace(-0.1, 0.1, 5)])
    assert contact_slots.facet_count(np.concatenate([plate, plate[:4] + [0, 0, 0.02]]), 0.005) == 25
    # A wider tolerance takes the next points in: a box 1 cm high, from 4 to all 8 corners.
    flat = corners * [1, 1, 0.1]
    assert contact_slots.facet_count(flat, 0.005) == 4 and contact_slots.facet_count(flat, 0.02) == 8
    assert contact_slots.facet_count(corners[:3], 0.005) == 3


def test_build_chooses_the_slots_and_checks_the_argument(humanoid, box):
    """``"auto"`` gives the shipped humanoid 83 slots for its 163 points and the box its 4 bottom
    corners, ``None`` keeps every point, and anything else is an error naming the argument."""
    counts = np.bincount(np.asarray(humanoid.point_link), minlength=humanoid.number_of_links)
    auto = js.SimulationParams.build(humanoid).contact_slots
    assert len(humanoid.point_link) == 163 and sum(auto) == 83 and np.all(np.asarray(auto) <= counts)
    assert js.SimulationParams.build(box).contact_slots == (4,)
    assert js.SimulationParams.build(humanoid, contact_slots=None).contact_slots is None
    for bad in (0, 4, "all"):
        with pytest.raises(ValueError, match="contact_slots must be 'auto' or None"):
            js.SimulationParams.build(box, contact_slots=bad)


def test_on_a_plane_a_ring_rests_on_its_square(humanoid):
    """On a plane, the points of a cylinder's rim ring that may be slots are the 4 a quarter turn
    apart (the first, at the rim's deepest point, and every other of 8): the humanoid's 8
    cylinders rest on 4 slots each instead of 8, 51 slots in all; every point stays a slot
    candidate of the other links."""
    keep = contact_slots.square_points(humanoid)
    rings = np.asarray(humanoid.point_ring)
    params = js.SimulationParams.build(humanoid)
    assert keep.sum() == len(keep) - 4 * len(np.unique(rings[rings > 0])) and np.all(keep[rings == 0])
    for ring in np.unique(rings[rings > 0]):
        assert np.array_equal(np.flatnonzero(keep[rings == ring]), [0, 2, 4, 6])
    assert sum(params.plane_slots.counts) == 51 and np.array_equal(params.plane_slots.candidates(len(keep)), keep)
    assert all(plane == (4 if np.any(rings[np.asarray(humanoid.point_link) == link] > 0) else count)
               for link, (plane, count) in enumerate(zip(params.plane_slots.counts, params.contact_slots)))


@pytest.mark.parametrize("tilt", [0.0, 0.3])
def test_a_can_rests_on_the_plane_on_its_rim_s_square(sim, tilt, figures):
    """A 1 kg can (r 5 cm, 20 cm long; rings of 8 points) released standing (tilt 0: rests flat on
    its cap) or tilted by 0.3 rad onto its rim (falls onto its cap) at 10 ms: it comes to rest on
    the 4 points of its cap's square, each as deep as ``max_penetration`` within 10 %, carrying its
    weight within 1e-3."""
    model = js.load_model(CAN)
    params = js.SimulationParams.build(model, dt=0.01)
    assert params.contact_slots == (8,) and params.plane_slots.counts == (4,)
    half = np.array([np.cos(tilt / 2), np.sin(tilt / 2), 0.0, 0.0])
    state = js.State.build(model, base_position=[0.0, 0.0, 0.1 * np.cos(tilt) + 0.05 * np.sin(tilt) + 0.002], base_quaternion=half)
    final, _, outputs = sim(model, state, params, steps=200)
    weight = np.asarray(outputs.contact_forces)[-1, :, 2].sum() / 9.81
    depth = np.asarray(outputs.penetration)[-1]
    figures(f"can on a plane from tilt {tilt}, dt 10 ms: normal force / m g after 2 s", weight)
    assert np.asarray(outputs.in_contact)[-1].sum() == 4
    assert np.allclose(depth[np.asarray(outputs.in_contact)[-1]], 1e-3, rtol=0.1)
    assert abs(weight - 1.0) < 1e-3 and np.abs(np.asarray(final.base_velocity)).max() < 1e-3


def test_slots_are_the_deepest_enabled_points_and_sum_into_their_links(humanoid):
    """Per link, the slots are its ``k`` deepest enabled points; per-slot values sum into their
    links, and ``link_totals`` gives each slot its link's sum (against numpy)."""
    rng = np.random.default_rng(0)
    links = np.asarray(humanoid.point_link)
    counts = js.SimulationParams.build(humanoid).contact_slots
    depth = rng.normal(0, 0.01, links.size)
    enabled = rng.uniform(size=links.size) > 0.2
    slots = contact_slots.contact_slots(humanoid, jnp.asarray(depth), jnp.asarray(enabled), counts)
    points, valid = np.asarray(slots.points), np.asarray(slots.valid)
    for link in np.unique(links):
        mine = np.flatnonzero(links == link)
        chosen = points[valid & (links[points] == link)]
        expected = mine[enabled[mine]]
        expected = expected[np.argsort(-depth[expected], kind="stable")][: counts[link]]
        assert sorted(chosen) == sorted(expected), humanoid.link_names[link]
    values = rng.normal(size=(points.size, 6))
    sums = np.asarray(slots.link_sums(jnp.asarray(values), humanoid.number_of_links))
    reference = np.zeros((humanoid.number_of_links, 6))
    for s in range(points.size):
        reference[links[points[s]]] += values[s]
    np.testing.assert_allclose(sums, reference, rtol=1e-12, atol=1e-12)
    totals = np.asarray(slots.link_totals(jnp.asarray(values[:, 0])))
    np.testing.assert_allclose(totals, reference[links[points], 0], rtol=1e-12, atol=1e-12)


def test_slot_link_terms_are_the_point_inertias_and_wrenches_summed(humanoid):
    """The step's per-link sums of the slots' point inertias ``X_p^T (W + h C) X_p`` and step-force
    wrenches, assembled components first, equal the 6x6 and 6-vector terms summed per slot, with
    the slots of the step and with every point a slot."""
    rng = np.random.default_rng(1)
    links = humanoid.number_of_links
    counts = js.SimulationParams.build(humanoid).contact_slots
    depth = jnp.asarray(rng.normal(0, 0.01, len(humanoid.point_link)))
    chosen = contact_slots.contact_slots(humanoid, depth, jnp.ones(depth.shape, bool), counts)
    for slots in (chosen, contact_slots.every_point(humanoid)):
        size = len(humanoid.point_link) if slots.points is None else slots.points.shape[0]
        unit = lambda: (lambda v: v / np.linalg.norm(v, axis=1, keepdims=True))(rng.normal(size=(size, 3)))  # noqa: E731
        linear = contacts.ImplicitContacts(
            step_forces=jnp.asarray(rng.normal(size=(size, 3))), isotropic=jnp.asarray(rng.uniform(1, 2, size)),
            normal_excess=jnp.asarray(rng.uniform(0, 5, size)), sliding_excess=jnp.asarray(-rng.uniform(0, 1, size)),
            normal=jnp.asarray(unit()), slots=slots, law=SimpleNamespace(direction=jnp.asarray(unit())), carried=None, pressing=None)
        points = jnp.asarray(rng.normal(0, 0.5, (size, 3)))
        inertia, wrench = model_step._slot_link_terms(slots, points, linear, links)
        want_inertia = slots.link_sums(model_step.point_inertias(points, linear.matrices), links)
        forces = linear.step_forces
        want_wrench = slots.link_sums(jnp.concatenate([forces, jnp.cross(points, forces)], axis=-1), links)
        np.testing.assert_allclose(inertia, want_inertia, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(wrench, want_wrench, rtol=1e-12, atol=1e-12)


def test_the_step_is_the_same_while_no_link_has_more_points_touching_than_slots(humanoid, sim):
    """A perturbed humanoid dropped from 0.3 m, 120 steps of 5 ms through the impact: no link
    ever has more points touching than its slots, and the default slots (83 of the 163 points)
    give the states and forces of every point a slot, to rounding amplified by the impacts (with
    the perturbation of seed 3, a foot lands on 5 corners for two steps; with that of 4, the two
    runs differ by 1e-7 after 90 steps; with that of 5, by 1.7e-8 after 111 steps, where the
    separating row of :mod:`~jaxsim_like.simulation.separating_rows` goes to one of two corners
    whose gains differ by rounding)."""
    q = np.random.default_rng(5).uniform(-0.5, 0.5, humanoid.dofs)
    state = js.State.build(humanoid, base_position=[0.0, 0.0, 0.0], joint_positions=q)
    lowest = float(contact_point_positions(humanoid, state)[:, 2].min())
    state = state.replace(base_position=jnp.array([0.0, 0.0, 0.3 - lowest]))
    every = js.SimulationParams.build(humanoid, dt=0.005, contact_slots=None)
    auto = js.SimulationParams.build(humanoid, dt=0.005)
    _, states_every, out_every = sim(humanoid, state, every, steps=120)
    _, states_auto, out_auto = sim(humanoid, state, auto, steps=120)
    links = np.asarray(humanoid.point_link)
    touching = np.stack([np.bincount(links[row], minlength=humanoid.number_of_links) for row in np.asarray(out_every.in_contact)])
    assert touching.sum(axis=1).max() > 5
    assert np.all(touching <= np.asarray(auto.contact_slots))
    for got, want in zip(jax.tree.leaves(states_auto), jax.tree.leaves(states_every)):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(out_auto.contact_forces, out_every.contact_forces, rtol=1e-9, atol=1e-6)
    np.testing.assert_array_equal(out_auto.in_contact, out_every.in_contact)


PLATE_CHUNK = 100


@pytest.mark.parametrize("dt", [0.001, 0.01])
def test_a_plate_rests_on_every_point_of_its_face(sim, dt, figures):
    """A 1 kg plate 2 cm thick, 20 points on its bottom face, tilted and released on the ground:
    ``"auto"`` gives it 24 slots (the face and the lowest samples of its vertical edges, 4 mm up),
    all 20 carry it and it comes to rest on its weight at 1 and 10 ms (with 4 slots and the
    other 16 points explicit, it was thrown off the ground at 5 ms)."""
    model = js.load_model(PLATE.format(mass=1.0, inertia=0.2**2 / 6), contact_sampling=js.ContactSampling(box_edge_samples=4))
    params = js.SimulationParams.build(model, dt=dt)
    assert params.contact_slots == (24,)
    state = js.State.build(model, base_position=[0.0, 0.0, 0.0105], base_quaternion=[1.0, 0.01, 0.02, 0.0])
    final = state
    for _ in range(int(round(1.0 / dt)) // PLATE_CHUNK):  # one compiled rollout for both step sizes
        final, _, outputs = sim(model, final, params, steps=PLATE_CHUNK)
    weight = np.asarray(outputs.contact_forces)[-1, :, 2].sum() / 9.81
    figures(f"plate on 20 points, dt {dt * 1000:g} ms: normal force / m g after 1 s", weight)
    assert np.asarray(outputs.in_contact)[-1].sum() == 20
    assert abs(weight - 1.0) < 1e-3 and np.abs(np.asarray(final.base_velocity)).max() < 1e-3


def test_a_box_started_under_the_ground_rests_on_its_slots(box, sim, figures):
    """The box (8 corners, its 4 bottom ones as slots) started with its top face 1 cm under the
    ground, all 8 corners touching: its 4 deepest carry it out, and at dt 10 ms it comes to rest
    on its weight within 2 s (the touching points beyond the slots feel no force; left
    explicit, such points made 1 of 64 humanoid drops diverge at 5 ms)."""
    params = js.SimulationParams.build(box, dt=0.01)
    half_height = float(-np.min(np.asarray(box.collidable_points)[:, 2]))
    state = js.State.build(box, base_position=[0.0, 0.0, -half_height - 0.01])
    final, states, outputs = sim(box, state, params, steps=200)
    assert (np.asarray(outputs.penetration)[0] > 0).sum() == 8 and np.asarray(outputs.in_contact)[0].sum() == 4
    weight = np.asarray(outputs.contact_forces)[-1, :, 2].sum() / 9.81
    figures("box started under the ground, dt 10 ms: normal force / m g after 2 s", weight)
    assert np.all(np.isfinite(np.asarray(states.base_velocity)))
    assert abs(weight - 1.0) < 1e-3 and np.abs(np.asarray(final.base_velocity)).max() < 1e-3
