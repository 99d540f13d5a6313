"""Run by test_workflow_batching.py in a subprocess whose XLA_FLAGS give the CPU 4 devices.

Simulates batches sharded over the 4 devices and on one device, and prints one JSON object:
the device count, the shardings seen and the largest absolute difference of every comparison.
Not a test module itself (pytest collects only ``test_*.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import jaxsim_like as js
from jaxsim_like import batching

ASSETS = Path(__file__).resolve().parents[1] / "assets"


def difference(a, b) -> float:
    """Largest difference over every leaf of two pytrees, each leaf's absolute difference divided
    by ``max(1, its largest magnitude)`` (so forces of hundreds of newtons are compared relatively);
    booleans compared as 0/1."""
    leaves = [(np.asarray(x, float), np.asarray(y, float)) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b))]
    assert all(x.shape == y.shape for x, y in leaves), [(x.shape, y.shape) for x, y in leaves]
    return max(float(np.max(np.abs(x - y), initial=0.0) / max(1.0, np.max(np.abs(y), initial=0.0))) for x, y in leaves)


def boxes() -> dict:
    """Six boxes thrown onto planes at different heights, with their own mass and friction
    (padded to 8 worlds on 4 devices), host (numpy) inputs."""
    model = js.load_model(ASSETS / "free_box.urdf")
    params = js.SimulationParams.build(model)
    batch, steps = 6, 100
    rng = np.random.default_rng(0)
    position = np.c_[rng.uniform(-1, 1, (batch, 2)), rng.uniform(0.06, 0.2, batch)]
    velocity = np.c_[rng.uniform(-1, 1, (batch, 2)), rng.uniform(-1, 0, batch), rng.uniform(-3, 3, (batch, 3))]
    states = jax.tree.map(
        np.asarray, jax.vmap(lambda p, v: js.State.build(model, base_position=p, base_velocity=v))(position, velocity)
    )
    masses = np.asarray(model.link_mass)[None] * np.linspace(0.5, 2.0, batch)[:, None]
    friction = np.linspace(0.2, 1.0, batch)
    offsets = np.linspace(-0.02, 0.02, batch)
    batched_model = model.replace(link_mass=masses)
    batched_params = params.replace(
        contact=params.contact.replace(friction=friction), terrain=params.terrain.replace(plane_offset=offsets)
    )
    torques = np.zeros((steps, model.dofs))
    runs = {}
    for name, devices, chunk in (("one_device", jax.devices()[:1], None), ("sharded", None, None), ("sharded_chunked", None, 1)):
        runs[name] = batching.simulate_batch(
            model, states, torques, params=params, batched_model=batched_model, batched_params=batched_params,
            devices=devices, chunk_size=chunk, trajectory=True,
        )

    def reference(state, mass, mu, offset):
        world = params.replace(contact=params.contact.replace(friction=mu), terrain=params.terrain.replace(plane_offset=offset))
        return js.rollout(model.replace(link_mass=mass), state, torques, params=world)

    expected = jax.jit(jax.vmap(reference))(states, masses, friction, offsets)
    final = runs["sharded"][0]
    return {
        "boxes_sharded_vs_one_device": difference(runs["sharded"], runs["one_device"]),
        "boxes_chunked_vs_one_device": difference(runs["sharded_chunked"], runs["one_device"]),
        "boxes_one_device_vs_vmap_rollout": difference(runs["one_device"], expected),
        "boxes_batch": int(final.base_position.shape[0]),
        "boxes_trajectory_shape": list(runs["sharded"][1][0].base_position.shape),
        "boxes_bounced": float(np.ptp(np.asarray(runs["one_device"][1][0].base_position[:, :, 2]))),
    }


def pendulums() -> dict:
    """Eight pendulums with their own torque sequences (no padding: 2 per device), device inputs:
    sharded in chunks of one world, final states only (the boxes' runs compare a sharded
    trajectory), against the trajectory on one device."""
    model = js.load_model(js.models.path("pendulum"))
    params = js.SimulationParams.build(model, dt=0.005)
    batch, steps = 8, 100
    rng = np.random.default_rng(1)
    states = jax.vmap(lambda q: js.State.build(model, joint_positions=q))(jnp.asarray(rng.uniform(-1, 1, (batch, 1))))
    torques = jnp.asarray(rng.uniform(-5, 5, (batch, steps, 1)))
    one = batching.simulate_batch(model, states, torques, params=params, devices=jax.devices()[:1], chunk_size=None, trajectory=True)
    final_only, summary = batching.simulate_batch(model, states, torques, params=params, chunk_size=1)
    first_nonfinite = summary.first_nonfinite
    mesh = batching.batch_mesh()
    return {
        "pendulums_final_only_vs_one_device": difference(final_only, one[0]),
        "pendulums_final_only_all_finite": np.asarray(first_nonfinite).tolist() == [-1] * batch,
        "pendulums_sharding_devices": len(final_only.joint_positions.sharding.device_set),
        "pendulums_sharding_spec": str(final_only.joint_positions.sharding.spec),
        "pendulums_shard_rows": sorted(int(s.data.shape[0]) for s in final_only.joint_positions.addressable_shards),
        "local_rows": [batching.local_rows(8, mesh).start, batching.local_rows(8, mesh).stop],
        "padded_size_6": batching.padded_size(6, mesh),
    }


if __name__ == "__main__":
    figures = {"devices": len(jax.devices()), "process_count": jax.process_count(), **boxes(), **pendulums()}
    print(json.dumps(figures))
