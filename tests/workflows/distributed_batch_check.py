"""One process of a multi-process ``simulate_batch``, run by test_workflow_distributed.py.

``python distributed_batch_check.py PORT PROCESS_ID NUM_PROCESSES OUT`` joins a JAX distributed
run whose coordinator listens on ``127.0.0.1:PORT`` (process 0 runs it), with 2 CPU devices per
process, simulates the batches of :func:`runs` over the global mesh, gathers every result on every
process (``process_allgather``) and writes them to ``OUT`` (``.npz``), with the process's own rows
and the global device count. ``NUM_PROCESSES`` 0 runs the same batches in this one process, on
one device, without ``jax.distributed``: the reference. Not a test module itself.
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
import jaxsim_like as js  # noqa: E402
from jaxsim_like import batching  # noqa: E402

ASSETS = Path(__file__).resolve().parents[1] / "assets"
DEVICES_PER_PROCESS = 2


def runs(devices=None) -> dict:
    """Every result to compare, as pytrees of (global) arrays, keyed by name.

    - ``boxes``: 6 boxes thrown onto planes at their own heights, with their own mass and friction,
      host (numpy) inputs, every step kept; padded to 8 worlds over 4 devices.
    - ``pendulums`` and ``pendulums_continued``: 8 pendulums with their own torques, device inputs,
      final states and summaries; then 100 more steps from the returned (global) final states, which
      go back in as they are (one compilation for both).
    """
    model = js.load_model(ASSETS / "free_box.urdf")
    params = js.SimulationParams.build(model)
    batch, steps = 6, 60
    rng = np.random.default_rng(0)
    position = np.c_[rng.uniform(-1, 1, (batch, 2)), rng.uniform(0.06, 0.2, batch)]
    velocity = np.c_[rng.uniform(-1, 1, (batch, 2)), rng.uniform(-1, 0, batch), rng.uniform(-3, 3, (batch, 3))]
    states = jax.tree.map(
        np.asarray, jax.vmap(lambda p, v: js.State.build(model, base_position=p, base_velocity=v))(position, velocity)
    )
    masses = np.asarray(model.link_mass)[None] * np.linspace(0.5, 2.0, batch)[:, None]
    friction = np.linspace(0.2, 1.0, batch)
    offsets = np.linspace(-0.02, 0.02, batch)
    boxes = batching.simulate_batch(
        model, states, np.zeros((steps, model.dofs)), params=params, devices=devices, trajectory=True,
        batched_model=model.replace(link_mass=masses),
        batched_params=params.replace(
            contact=params.contact.replace(friction=friction), terrain=params.terrain.replace(plane_offset=offsets)
        ),
    )

    model = js.load_model(js.models.path("pendulum"))
    params = js.SimulationParams.build(model, dt=0.005)
    batch = 8
    rng = np.random.default_rng(1)
    states = jax.vmap(lambda q: js.State.build(model, joint_positions=q))(jnp.asarray(rng.uniform(-1, 1, (batch, 1))))
    torques = jnp.asarray(rng.uniform(-5, 5, (batch, 100, 1)))
    final, summary = batching.simulate_batch(model, states, torques, params=params, devices=devices)
    continued = batching.simulate_batch(model, final, torques, params=params, devices=devices)
    return {"boxes": boxes, "pendulums": (final, summary), "pendulums_continued": continued}


def gathered(results: dict) -> dict[str, np.ndarray]:
    """Every leaf of ``results`` as one host array holding the rows of every process, keyed by the
    result's name and the leaf's path (e.g. ``boxes[1][0].base_position``)."""
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        results = multihost_utils.process_allgather(results, tiled=True)
    leaves = jax.tree_util.tree_flatten_with_path(results)[0]
    return {f"{path[0].key}{jax.tree_util.keystr(path[1:])}": np.asarray(leaf) for path, leaf in leaves}


def main(port: int, process_id: int, num_processes: int, out: str) -> None:
    devices = None
    if num_processes:
        jax.config.update("jax_num_cpu_devices", DEVICES_PER_PROCESS)
        jax.distributed.initialize(
            coordinator_address=f"127.0.0.1:{port}", num_processes=num_processes, process_id=process_id,
            initialization_timeout=60,
        )
    else:
        devices = jax.devices()[:1]
    results = runs(devices)
    arrays = gathered(results)
    final = results["pendulums"][0].joint_positions
    info = {
        "process_count": jax.process_count(),
        "devices": len(final.sharding.device_set),
        "local_devices": len(jax.local_devices()),
        "own_rows": sorted(int(i) for s in final.addressable_shards for i in range(8)[s.index[0]]),
        "local_rows": list(batching.local_rows(8, batching.batch_mesh(devices)).indices(8)[:2]),
    }
    np.savez(out, info=json.dumps(info), **arrays)
    if num_processes:
        jax.distributed.shutdown()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
