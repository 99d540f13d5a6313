"""Batched, sharded simulation: many quadrupeds, each with its own mass, friction and ground.

Drops B quadrupeds (jaxsim_like.models.path("quadruped")) whose trunk mass, ground friction and
ground height differ per world, with jaxsim_like.batching.simulate_batch: one
jit(shard_map(vmap | lax.map)(scan)), the batch sharded over every device. On a CPU,
``--cpu-devices N`` splits it into N XLA devices (it sets
XLA_FLAGS=--xla_force_host_platform_device_count=N before JAX starts) to show the sharding.

On several hosts: start this same script on each with ``--distributed`` (it calls
``jax.distributed.initialize()``, which reads the coordinator from the environment, e.g. under
SLURM, or JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES and JAX_PROCESS_ID); every host builds the
same batch and simulates only the rows of its own devices.

    python examples/batch_simulation.py [--quick] [--batch B] [--cpu-devices N] [--distributed] [--plot DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 worlds for 0.4 s")
    parser.add_argument("--batch", type=int, default=256, help="number of worlds (default 256)")
    parser.add_argument("--duration", type=float, default=1.0, help="simulated time [s] (default 1)")
    parser.add_argument("--cpu-devices", type=int, help="split the CPU into this many XLA devices (before JAX starts)")
    parser.add_argument("--distributed", action="store_true", help="call jax.distributed.initialize() first (multi-host)")
    parser.add_argument("--plot", metavar="DIR", help="save the trajectory of world 0 as a PNG in DIR (needs matplotlib)")
    return parser.parse_args(argv)


def run(batch: int, duration: float, plot: str | None = None, verbose: bool = True) -> dict:
    """Simulate the batch; returns figures of what happened."""
    if plot is not None:
        from jaxsim_like.plots import require_matplotlib

        require_matplotlib()  # now, not after the run
    import jax
    import jax.numpy as jnp
    import numpy as np

    try:
        import jaxsim_like as js
    except ImportError:  # a checkout without `pip install -e .`
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        import jaxsim_like as js
    from jaxsim_like.batching import simulate_batch
    from jaxsim_like.monitor import Keep
    from jaxsim_like.simulation.step import contact_point_positions

    model = js.load_model(js.models.path("quadruped"))
    dt = 0.001
    params = js.SimulationParams.build(model, dt=dt)
    steps = round(duration / dt)
    rng = np.random.default_rng(0)
    # Every host draws the same batch (same seed); simulate_batch keeps each host's own rows.
    trunk_mass = rng.uniform(6.0, 14.0, batch)
    friction = rng.uniform(0.2, 1.0, batch)
    ground = rng.uniform(-0.05, 0.05, batch)

    # Jitted (run eagerly, each operation would compile on its own); the start is a batch of one
    # for the program that measures the final states.
    point_positions = jax.jit(jax.vmap(contact_point_positions, in_axes=(None, 0)))
    state = js.State.build(model)
    lowest = float(jnp.min(point_positions(model, jax.tree.map(lambda x: x[None], state))[0, :, 2]))
    heights = ground + 0.1 - lowest  # the lowest point 10 cm above its ground
    states = jax.jit(jax.vmap(lambda z: state.replace(base_position=state.base_position.at[2].set(z))))(jnp.asarray(heights))
    masses = np.repeat(np.asarray(model.link_mass)[None], batch, axis=0)
    masses[:, 0] = trunk_mass
    batched_model = model.replace(link_mass=masses)
    batched_params = params.replace(
        contact=params.contact.replace(friction=friction),
        terrain=params.terrain.replace(plane_offset=ground),
    )
    torques = np.zeros((steps, model.dofs))

    began = time.perf_counter()
    # Only world 0's trajectory is kept, and only to plot it; every world keeps its final state and statistics.
    final, kept = simulate_batch(
        model, states, torques, params=params, batched_model=batched_model, batched_params=batched_params,
        trajectory=Keep(worlds=(0,)) if plot else False,
    )
    jax.block_until_ready(final)
    seconds = time.perf_counter() - began
    # Lowest collidable point above each world's ground at the end (the feet rest ~ on it).
    final_points = point_positions(model, final)
    clearance = np.asarray(jnp.min(final_points[:, :, 2], axis=1)) - ground
    figures = {
        "devices": len(jax.devices()),
        "processes": jax.process_count(),
        "worlds": batch,
        "steps": steps,
        "seconds_with_compile": seconds,
        "world_steps_per_second": batch * steps / seconds,
        "max_clearance_at_end_m": float(np.max(np.abs(clearance))),
        "finite": bool(np.isfinite(np.asarray(final.base_position)).all()),
    }
    if plot and jax.process_index() == 0:
        from jaxsim_like.plots import plot_recording
        from jaxsim_like.recording import Recording

        folder = Path(plot)
        folder.mkdir(parents=True, exist_ok=True)
        _, samples = kept
        recording = Recording.from_samples(model, jax.tree.map(np.asarray, samples), dt)
        plot_recording(recording, folder / "batch_simulation_world0.png", world=0)
        figures["plots"] = str(folder)
    if verbose and jax.process_index() == 0:
        for name, value in figures.items():
            print(f"{name:24s} {value:.6g}" if isinstance(value, float) else f"{name:24s} {value}")
    return figures


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.cpu_devices:
        if "jax" in sys.modules:
            print("--cpu-devices must be given before JAX starts (run this script directly)", file=sys.stderr)
            return 2
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={args.cpu_devices}".strip()
    import jax

    jax.config.update("jax_enable_x64", True)
    if args.distributed:
        jax.distributed.initialize()
    batch, duration = (8, 0.4) if args.quick else (args.batch, args.duration)
    figures = run(batch, duration, plot=args.plot)
    return 0 if figures["finite"] and figures["max_clearance_at_end_m"] < 0.02 else 1


if __name__ == "__main__":
    sys.exit(main())
