"""The terrain drift of a free body's contact slots (``model_step._terrain_drift``, issue 29) in its
two limits, against :func:`jaxsim_like.simulation.contacts.round_drift` and the state update's frame
term ``h w x v``: where the body turns by a small fraction of a radian in a step, its round contacts
take the normal part of the round drift of the material under them (as on ``main`` before the
frame term) and its corners nothing; where it turns by radians, every slot takes the frame term.
A robot's links keep the step's linearisation (no drift). Random velocities, contact points and
normals, float64; no rollout."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import scenes
from jaxsim_like.dynamics import kinematics as kin_module
from jaxsim_like.simulation import contacts, model_step
from jaxsim_like.simulation.contact_slots import Slots

DT = 0.002  # [s]


def _drift(model, turn: float, seed: int):
    """The drift of every point of ``model`` (as slots) for a random velocity turning the body by
    ``turn`` [rad] over the step, and the references: the normal part of the round drift at each
    point, the frame term, the radii."""
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=3)
    w = turn / DT * axis / np.linalg.norm(axis)
    v = rng.uniform(-2.0, 2.0, 3)
    state = js.State.build(model, base_position=np.array([0.1, -0.2, 0.3]), base_velocity=np.concatenate([v, w]))
    kin = kin_module.kinematics(model, state)
    count = len(model.point_radius)
    points = jnp.asarray(rng.uniform(-0.05, 0.05, (count, 3)))
    normal = rng.normal(size=(count, 3))
    normal = jnp.asarray(normal / np.linalg.norm(normal, axis=1, keepdims=True))
    slots = Slots(points=None, valid=None, layout=None)
    drift = np.asarray(model_step._terrain_drift(model, slots, kin, points, normal, jnp.asarray(DT)))
    radius = jnp.asarray(model.point_radius, points.dtype)
    material = jnp.asarray(v) + jnp.cross(jnp.asarray(w), points)
    round_ = np.asarray(contacts.round_drift(jnp.broadcast_to(jnp.asarray(w), points.shape), material, radius, normal, jnp.asarray(DT)))
    along = np.sum(round_ * np.asarray(normal), axis=1, keepdims=True) * np.asarray(normal)
    return drift, along, DT * np.cross(w, v), np.asarray(model.point_radius)


@pytest.mark.parametrize("make", [lambda: scenes.capsule(0.02, 0.06, mass=0.2), lambda: scenes.box((0.06, 0.04, 0.03), mass=0.2)],
                         ids=["capsule", "box"])
def test_small_turns_take_the_round_drift_normal_part_corners_none(make):
    """At a turn of 0.01 rad a step the round slots' drift is the normal part of the round drift and
    the corners' is zero, within 1e-6 of the frame term's size."""
    model = make()
    drift, along, frame, radius = _drift(model, 0.01, 0)
    expected = np.where((radius > 0)[:, None], along, 0.0)
    np.testing.assert_allclose(drift, expected, atol=1e-6 * np.linalg.norm(frame))


@pytest.mark.parametrize("make", [lambda: scenes.capsule(0.02, 0.06, mass=0.2), lambda: scenes.box((0.06, 0.04, 0.03), mass=0.2)],
                         ids=["capsule", "box"])
def test_large_turns_take_the_frame_term_at_every_slot(make):
    """At a turn of 10 rad a step every slot's drift is the frame term ``h w x v`` within 1e-3 of the
    drift of a round slot's centre."""
    model = make()
    drift, along, frame, _ = _drift(model, 10.0, 1)
    scale = np.linalg.norm(frame) + np.abs(along).max()
    np.testing.assert_allclose(drift, np.broadcast_to(frame, drift.shape), atol=1e-3 * scale)


def test_robots_keep_the_linearisation():
    """A model of several links has no terrain drift."""
    model = js.load_model("jaxsim_like/models/humanoid/humanoid.urdf")
    state = js.State.build(model)
    kin = kin_module.kinematics(model, state)
    count = len(model.point_radius)
    assert model_step._terrain_drift(model, Slots(None, None, None), kin, jnp.zeros((count, 3)), jnp.zeros((count, 3)), jnp.asarray(DT)) is None
