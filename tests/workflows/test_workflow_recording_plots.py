"""Recordings (.npz round trip, single and batched) and the figures of jaxsim_like.plots."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.batching import simulate_batch
from jaxsim_like.monitor import STATE_FIELDS, Keep
from jaxsim_like.recording import Recording, RecordingWriter


@pytest.fixture(scope="module")
def drops():
    """Two quadruped drops (0.45 and 0.6 m), 60 steps: model, params, states and the full trajectory."""
    model = js.load_model(js.models.path("quadruped"))
    params = js.SimulationParams.build(model, dt=0.002)
    heights = jnp.array([0.45, 0.6])
    states = jax.vmap(lambda z: js.State.build(model, base_position=[0.0, 0.0, z]))(heights)
    torques = jnp.zeros((60, model.dofs))
    _, (trajectory, outputs) = jax.jit(jax.vmap(lambda s: js.rollout(model, s, torques, params=params)))(states)
    return model, params, states, trajectory, outputs


@pytest.fixture(scope="module")
def recordings(drops):
    """A recording of 2 quadruped worlds (batched) and of the first alone, 60 steps."""
    model, _, _, trajectory, outputs = drops
    batched = Recording.from_rollout(model, trajectory, outputs, 0.002, note="two drops")
    single = Recording.from_rollout(model, *jax.tree.map(lambda x: x[0], (trajectory, outputs)), 0.002)
    return model, single, batched


def assert_same(a: Recording, b: Recording) -> None:
    for field in ("time", "base_position", "base_quaternion", "base_velocity", "joint_positions",
                  "joint_velocities", "joint_torques", "contact_forces"):
        if getattr(b, field) is None:
            assert getattr(a, field) is None, field
        else:
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


def test_kept_samples_are_every_kth_step_of_the_chosen_worlds(drops, tmp_path):
    model, params, states, trajectory, outputs = drops
    keep = Keep(fields=("joint_positions", "contact_forces", "penetration", "contact_deformation"), every=6, worlds=(1,))
    final, (summary, samples) = simulate_batch(model, states, np.zeros((60, model.dofs)), params=params, trajectory=keep)
    assert sorted(samples) == sorted(keep.fields)
    for name in keep.fields:
        full = getattr(trajectory if name in STATE_FIELDS else outputs, name)
        np.testing.assert_allclose(samples[name], np.asarray(full)[[1], 5::6], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(final.joint_positions, trajectory.joint_positions[:, -1], rtol=1e-12, atol=1e-12)
    # The running statistics agree with the whole trajectory.
    np.testing.assert_array_equal(summary.first_nonfinite, [-1, -1])
    np.testing.assert_allclose(summary.max_penetration, np.asarray(outputs.penetration).max(axis=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(summary.contact_force, np.asarray(outputs.contact_forces)[:, -1].sum(axis=1), rtol=1e-12, atol=1e-9)
    assert float(summary.max_penetration[0]) > 0  # the lower drop touched down
    # Streamed in two chunks, then read back with the fields a recording has.
    recorded = {name: np.asarray(samples[name]) for name in ("joint_positions", "contact_forces")}
    writer = RecordingWriter(tmp_path / "kept.npz", model, {k: (1, *v.shape[2:]) for k, v in recorded.items()}, 10, 0.002, every=6, note="x")
    writer.write({k: v[:, :4] for k, v in recorded.items()})
    writer.write({k: v[:, 4:] for k, v in recorded.items()})
    writer.close()
    loaded = Recording.load(tmp_path / "kept.npz")
    expected = Recording.from_samples(model, recorded, 0.002, every=6, note="x")
    assert_same(loaded, expected)
    assert loaded.base_position is None and loaded.joint_positions.shape == (1, 10, model.dofs)
    np.testing.assert_allclose(loaded.time, 0.012 * np.arange(1, 11))


def test_keep_and_writer_refuse_what_cannot_work(drops, tmp_path):
    model, params, states, _, _ = drops
    with pytest.raises(ValueError, match=r"unknown field\(s\) \['speed'\]"):
        Keep(fields=("speed",))
    with pytest.raises(ValueError, match="every must be a positive integer"):
        Keep(every=0)
    with pytest.raises(ValueError, match=r"number of steps \(10\) must be a multiple of Keep.every \(4\)"):
        simulate_batch(model, states, np.zeros((10, model.dofs)), params=params, trajectory=Keep(every=4))
    with pytest.raises(ValueError, match="must be indices of the 2 worlds"):
        simulate_batch(model, states, np.zeros((10, model.dofs)), params=params, trajectory=Keep(worlds=(2,)))
    with pytest.raises(ValueError, match="a recording has no field 'penetration'"):
        RecordingWriter(tmp_path / "x.npz", model, {"penetration": (1, 4)}, 3, 0.002)
    assert not list(tmp_path.iterdir())


def test_plot_recording(recordings, tmp_path, assert_png):
    pytest.importorskip("matplotlib")
    from jaxsim_like.plots import plot_recording

    _, single, batched = recordings
    assert plot_recording(single, tmp_path / "single.png") == [str(tmp_path / "single.png")]
    assert_png(tmp_path / "single.png")
    # 12 joints in panels of 4, two panels a page: two pages, every joint drawn.
    files = plot_recording(batched, tmp_path / "batched.png", world=1, joints_per_panel=4, groups_per_page=2)
    assert files == [str(tmp_path / "batched-1.png"), str(tmp_path / "batched-2.png")]
    for file in files:
        assert_png(file)
    # Fields that were not kept leave their panels out; nothing to draw is an error.
    partial = dataclasses.replace(single, contact_forces=None, joint_torques=None)
    plot_recording(partial, tmp_path / "partial.png")
    assert_png(tmp_path / "partial.png")
    empty = dataclasses.replace(partial, base_position=None, joint_positions=None)
    with pytest.raises(ValueError, match="nothing to plot"):
        plot_recording(empty, tmp_path / "empty.png")


def test_plot_losses(tmp_path, assert_png):
    pytest.importorskip("matplotlib")
    from jaxsim_like.plots import plot_losses

    plot_losses(np.exp(-np.linspace(0, 8, 200)) + 1e-4, tmp_path / "losses.png", title="decay")
    plot_losses(np.linspace(-1.0, 1.0, 50), tmp_path / "signed.png")
    assert_png(tmp_path / "losses.png", minimum_bytes=5_000)
    assert_png(tmp_path / "signed.png", minimum_bytes=5_000)


def test_plot_returns(tmp_path, assert_png):
    pytest.importorskip("matplotlib")
    from jaxsim_like.plots import plot_returns

    plot_returns([5.0, 20.0, 35.0], [1.0, 40.0, 90.0], tmp_path / "returns.png", ylabel="mean return (250 actions)", title="PPO")
    assert_png(tmp_path / "returns.png", minimum_bytes=5_000)
