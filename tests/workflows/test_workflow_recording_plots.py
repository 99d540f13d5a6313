"""Recordings (.npz round trip, single and batched) and the figures of jaxsim_like.plots."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.recording import Recording


@pytest.fixture(scope="module")
def recordings():
    """A recording of 2 quadruped worlds (batched) and of the first alone, 60 steps."""
    model = js.load_model(js.models.path("quadruped"))
    params = js.SimulationParams.build(model, dt=0.002)
    heights = jnp.array([0.45, 0.6])
    states = jax.vmap(lambda z: js.State.build(model, base_position=[0.0, 0.0, z]))(heights)
    torques = jnp.zeros((60, model.dofs))
    _, (trajectory, outputs) = jax.jit(jax.vmap(lambda s: js.rollout(model, s, torques, params=params)))(states)
    batched = Recording.from_rollout(model, trajectory, outputs, 0.002, note="two drops")
    single = Recording.from_rollout(model, *jax.tree.map(lambda x: x[0], (trajectory, outputs)), 0.002)
    return model, single, batched


def assert_same(a: Recording, b: Recording) -> None:
    for field in ("time", "base_position", "base_quaternion", "base_velocity", "joint_positions",
                  "joint_velocities", "joint_torques", "contact_forces"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert (a.joint_names, a.link_names, a.point_link) == (b.joint_names, b.link_names, b.point_link)
    assert (a.velocity_representation, a.metadata) == (b.velocity_representation, b.metadata)


def test_round_trip(recordings, tmp_path):
    model, single, batched = recordings
    assert single.joint_positions.shape == (60, model.dofs)
    assert batched.joint_positions.shape == (2, 60, model.dofs)
    assert batched.metadata == {"model": "quadruped", "dt": 0.002, "note": "two drops"}
    for name, recording in (("single", single), ("batched", batched)):
        path = tmp_path / f"{name}.npz"
        recording.save(path)
        assert_same(Recording.load(path), recording)


def test_load_rejects_other_files(tmp_path):
    path = tmp_path / "other.npz"
    np.savez(path, x=np.zeros(3))
    with pytest.raises(ValueError, match="not a jaxsim_like recording"):
        Recording.load(path)


def test_plot_recording(recordings, tmp_path, assert_png):
    pytest.importorskip("matplotlib")
    from jaxsim_like.plots import plot_recording

    _, single, batched = recordings
    plot_recording(single, tmp_path / "single.png")
    plot_recording(batched, tmp_path / "batched.png", world=1)
    assert_png(tmp_path / "single.png")
    assert_png(tmp_path / "batched.png")


def test_plot_losses(tmp_path, assert_png):
    pytest.importorskip("matplotlib")
    from jaxsim_like.plots import plot_losses

    plot_losses(np.exp(-np.linspace(0, 8, 200)) + 1e-4, tmp_path / "losses.png", title="decay")
    plot_losses(np.linspace(-1.0, 1.0, 50), tmp_path / "signed.png")
    assert_png(tmp_path / "losses.png", minimum_bytes=5_000)
    assert_png(tmp_path / "signed.png", minimum_bytes=5_000)
