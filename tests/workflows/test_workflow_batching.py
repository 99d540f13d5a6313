"""Batched simulation (jaxsim_like.batching): the 4-device sharded run equals the single-device
run, and bad inputs raise ValueError naming what is wrong."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import batching
from jaxsim_like.monitor import Keep

HERE = Path(__file__).resolve().parent
TOLERANCE = 1e-12


@pytest.fixture(scope="module")
def sharded_figures(workflow_figures):
    """The figures of ``sharded_batch_check.py``, run with 4 forced CPU devices.

    XLA reads ``--xla_force_host_platform_device_count`` when its CPU backend starts, which this
    process has already done: hence the subprocess.
    """
    env = dict(os.environ)
    env["XLA_FLAGS"] = " ".join(filter(None, [env.get("XLA_FLAGS", ""), "--xla_force_host_platform_device_count=4"]))
    done = subprocess.run(
        [sys.executable, str(HERE / "sharded_batch_check.py")], check=False, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-4000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    for name in ("boxes_sharded_vs_one_device", "boxes_chunked_vs_one_device", "pendulums_final_only_vs_one_device"):
        workflow_figures(f"batching: {name} (max scaled difference)", figures[name])
    return figures


def test_sharded_runs_on_four_devices(sharded_figures):
    assert sharded_figures["devices"] == 4 and sharded_figures["process_count"] == 1
    assert sharded_figures["pendulums_sharding_devices"] == 4
    assert sharded_figures["pendulums_sharding_spec"] == "P('batch',)"
    assert sharded_figures["pendulums_shard_rows"] == [2, 2, 2, 2]
    assert sharded_figures["local_rows"] == [0, 8]


def test_sharded_equals_single_device(sharded_figures):
    for name in (
        "boxes_sharded_vs_one_device",
        "boxes_chunked_vs_one_device",
        "boxes_one_device_vs_vmap_rollout",
        "pendulums_final_only_vs_one_device",
    ):
        assert sharded_figures[name] <= TOLERANCE, (name, sharded_figures[name])
    # The boxes did something worth comparing: they fell and bounced.
    assert sharded_figures["boxes_bounced"] > 0.05


def test_padding_is_stripped(sharded_figures):
    assert sharded_figures["padded_size_6"] == 8
    assert sharded_figures["boxes_batch"] == 6
    assert sharded_figures["boxes_trajectory_shape"] == [6, 100, 3]
    assert sharded_figures["pendulums_final_only_all_finite"]


def test_mesh_helpers_on_one_device():
    mesh = batching.batch_mesh()
    assert mesh.axis_names == ("batch",)
    assert batching.padded_size(5, mesh) == 5 * 1
    assert batching.local_rows(5, mesh) == slice(0, 5)
    # Chunks of about CPU_CHUNK_POINTS collidable points: the pendulum's 17 at the upper bound,
    # the humanoid's 163 in chunks of 16 (4096 // 163 = 25, rounded down to a power of two).
    assert batching.default_chunk_size(mesh, js.load_model(js.models.path("pendulum"))) == batching.CPU_CHUNK_BOUNDS[1]
    assert batching.default_chunk_size(mesh, js.load_model(js.models.path("humanoid"))) == 16
    with pytest.raises(ValueError, match="devices"):
        batching.batch_mesh([])


@pytest.fixture(scope="module")
def pendulum_batch():
    model = js.load_model(js.models.path("pendulum"))
    states = jax.vmap(lambda q: js.State.build(model, joint_positions=q))(jnp.zeros((3, 1)))
    return model, states


@pytest.mark.parametrize(
    "kwargs, torques_shape, message",
    [
        ({}, (10, 2), r"joint_torques must have shape \(T, 1\) or \(3, T, 1\)"),
        ({}, (4, 10, 1), r"joint_torques must have shape"),
        ({"chunk_size": 0}, (10, 1), "chunk_size must be a positive integer"),
        ({"chunk_size": "big"}, (10, 1), "chunk_size must be a positive integer"),
    ],
)
def test_bad_inputs_raise(pendulum_batch, kwargs, torques_shape, message):
    model, states = pendulum_batch
    with pytest.raises(ValueError, match=message):
        batching.simulate_batch(model, states, np.zeros(torques_shape), **kwargs)


def test_unbatched_states_raise(pendulum_batch):
    model, _ = pendulum_batch
    with pytest.raises(ValueError, match="batch axis"):
        batching.simulate_batch(model, js.State.build(model), np.zeros((10, 1)))


def test_batched_parameters_must_lead_with_the_batch(pendulum_batch):
    model, states = pendulum_batch
    with pytest.raises(ValueError, match=r"link_mass.*\(3, \.\.\.\)"):
        batching.simulate_batch(model, states, np.zeros((10, 1)), batched_model=model.replace(link_mass=np.ones((4, 2))))
    params = js.SimulationParams.build(model)
    other = params.replace(integrator="rk4")
    with pytest.raises(ValueError, match="structure"):
        batching.simulate_batch(model, states, np.zeros((10, 1)), params=params, batched_params=other)


def test_chunked_vmap_equals_vmap():
    model = js.load_model(js.models.path("cart_pole"))
    rng = np.random.default_rng(3)
    positions = jnp.asarray(rng.uniform(-1, 1, (11, model.dofs)))
    torques = jnp.asarray(rng.normal(size=(11, model.dofs)))

    def accelerations(q, u):
        return js.dynamics.forward_dynamics(model, js.State.build(model, joint_positions=q), joint_torques=u)[1]

    # Jitted: run eagerly, every primitive of the ABA is compiled on its own (about 40 s instead of 7).
    expected = jax.jit(jax.vmap(accelerations))(positions, torques)
    for chunk_size in (4, 11, None, "auto"):  # 3 chunks of 4 (a row padded); one (as any wider); none; 2 of 6 (8 on the CPU; a row padded)
        chunked = jax.jit(batching.chunked_vmap(accelerations, chunk_size))
        np.testing.assert_allclose(chunked(positions, torques), expected, rtol=1e-13)
    with pytest.raises(ValueError, match="same leading"):
        batching.chunked_vmap(accelerations)(positions, torques[:5])
    with pytest.raises(ValueError, match="chunk_size"):
        batching.chunked_vmap(accelerations, 0)


def test_continuing_from_the_final_states_does_not_recompile(pendulum_batch):
    # The final states carry the mesh's sharding; the first call's single-device states must be
    # placed with it too, or the second call compiles the run again (it did: 1.2 s).
    # In threads, each slice (2 of the 3 worlds, one padded) runs the one program of 2 worlds.
    model, states = pendulum_batch
    torques = np.zeros((5, 1))
    for threads, rows in ((1, 3), (2, 2)):
        final, _ = batching.simulate_batch(model, states, torques, threads=threads)
        final, _ = batching.simulate_batch(model, final, torques, threads=threads)
        mesh, shared = batching.batch_mesh(), (model, js.SimulationParams.build(model))
        flags = (False,) * len(jax.tree.leaves(shared))
        run = batching._compiled(mesh, jax.tree.structure(shared), flags, False, batching.default_chunk_size(mesh, model), rows, False, False)
        assert run._cache_size() == 1


def test_the_shared_arrays_are_placed_once(pendulum_batch, monkeypatch):
    # The model's and parameters' device arrays are placed on the mesh at the first call and
    # reused by the next calls with the same model: only the states move again.
    model, states = pendulum_batch
    params, torques = js.SimulationParams.build(model), np.zeros((5, 1))
    first, _ = batching.simulate_batch(model, states, torques, params=params, threads=1)
    moved, put = [], jax.device_put
    monkeypatch.setattr(jax, "device_put", lambda x, *a, **k: (moved.append(len(jax.tree.leaves(x))), put(x, *a, **k))[1])
    again, _ = batching.simulate_batch(model, states, torques, params=params, threads=1)
    assert moved == [len(jax.tree.leaves(states))]
    np.testing.assert_array_equal(first.joint_positions, again.joint_positions)


def test_threads_split_the_batch_and_equal_one_call():
    # 3 pendulums with their own start, mass and torques, in 2 threads (slices of 2, the last
    # world repeated): every state, output and kept sample equals the single call's.
    model = js.load_model(js.models.path("pendulum"))
    rng = np.random.default_rng(5)
    states = jax.vmap(lambda q: js.State.build(model, joint_positions=q))(jnp.asarray(rng.uniform(-1, 1, (3, 1))))
    torques = rng.normal(size=(3, 6, 1))
    masses = model.link_mass * (1 + rng.uniform(0, 0.5, (3, 1)))
    run = functools.partial(batching.simulate_batch, model, states, torques, batched_model=model.replace(link_mass=masses))
    keep = Keep(fields=("joint_positions", "joint_velocities"), every=2, worlds=(2, 0))
    for trajectory in (True, keep):
        one, two = run(threads=1, trajectory=trajectory), run(threads=2, trajectory=trajectory)
        assert jax.tree.structure(one) == jax.tree.structure(two)
        for a, b in zip(jax.tree.leaves(one), jax.tree.leaves(two)):
            assert a.shape == b.shape and np.array_equal(a, b)
    assert two[1][1]["joint_positions"].shape == (2, 3, 1)
    assert not np.array_equal(two[1][1]["joint_positions"][0], two[1][1]["joint_positions"][1])
    mesh = batching.batch_mesh()
    assert batching.cpu_threads(mesh, 1000) == len(os.sched_getaffinity(0))
    assert batching.cpu_threads(mesh, 3, 8) == 3
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        batching.simulate_batch(model, states, torques, threads=0)
