"""Batched simulation: ``B`` worlds for ``T`` steps in one ``jit(shard_map(vmap | lax.map)(scan))``.

:func:`simulate_batch` runs :func:`jaxsim_like.rollout` for a batch of initial states, with
shared or per-world joint torques, and optionally per-world model and simulation parameters
(masses, friction, terrain, ...). The batch axis is sharded over a one-axis
:class:`jax.sharding.Mesh` (axis ``"batch"``) of all devices (``jax.devices()``): each device
simulates its slice of the batch, with no communication. The batch is padded to a multiple of
the device count (repeating its last world) and the padding is stripped from the results.

Within a device, ``chunk_size`` chooses how its slice is batched:

- ``None``: one ``jax.vmap`` over the whole slice (best on GPU and TPU, which want wide arrays);
- an integer ``c``: a loop (``jax.lax.map``) over equal chunks of at most ``c`` worlds, each a
  ``vmap`` (the slice padded by repeating its last world, so that one chunk's program is
  compiled). On the CPU this keeps a step's working set in cache (docs/benchmarks.md, "Chunk
  sizes on the CPU"; ``jaxsim-like bench`` measures both on your machine).
- ``"auto"`` (default): on the CPU, chunks that hold about :data:`CPU_CHUNK_POINTS` collidable
  points (:func:`default_chunk_size`); ``None`` elsewhere.

On a mesh of one CPU device (the default on a CPU: JAX makes one device of all its cores), the
batch is also split into ``threads`` equal slices (padded the same way), which run at once from
as many Python threads: one compiled program for a slice, called concurrently, each call on the
core of its thread, as ``mujoco.rollout`` runs its worlds. The package keeps XLA's small kernels
on the calling thread (:mod:`jaxsim_like._xla`), so one call would otherwise use about one
core. ``threads="auto"`` (default) takes the cores this process may run on; a mesh of several
devices (``jax_num_cpu_devices``, GPUs) runs one slice per device instead.

Multi-host (multi-controller JAX): call ``jax.distributed.initialize()`` first (your call, once
per process), then call :func:`simulate_batch` with the same arguments on every process: the
mesh spans the global ``jax.devices()``, and each process hands over only the rows its own
devices hold (:func:`local_rows`) through ``jax.make_array_from_process_local_data``. The results
are global ``jax.Array`` s sharded over the batch; read a process's own rows from their
``addressable_shards``, or gather everything with
``jax.experimental.multihost_utils.process_allgather``. Choose ``B`` a multiple of the global
device count to avoid padding (which is stripped with a global slice). Final states passed back
in go through as they are (no copy, no recompilation). For example, two processes on one
machine (CPU devices; JAX's CPU collectives, Gloo by default, connect the processes)::

    # python run.py 0 & python run.py 1   (same script, same inputs, process id 0 and 1)
    import sys, jax
    jax.config.update("jax_num_cpu_devices", 2)            # optional: 2 devices per process
    jax.distributed.initialize(coordinator_address="127.0.0.1:12345", num_processes=2,
                               process_id=int(sys.argv[1]))
    final, summary = simulate_batch(model, states, torques)  # every process, same arguments
    from jax.experimental import multihost_utils
    final = multihost_utils.process_allgather(final, tiled=True)  # all B worlds, numpy, everywhere

On several machines, the coordinator address is one of them (process 0's) and each machine runs
its process(es); on GPU and TPU clusters ``jax.distributed.initialize()`` finds its arguments
itself. tests/workflows/test_workflow_distributed.py checks that 2 processes of 2 CPU devices
each give the one-process results to rounding in float64.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from .dynamics.model import Model
from .dynamics.state import State
from .simulation.params import SimulationParams
from .monitor import Keep, Summary, monitored_rollout
from .simulation.model_step import StepOutput
from .simulation.step import rollout

AXIS = "batch"
CPU_CHUNK_POINTS = 4096
"""On the CPU, :func:`simulate_batch`'s chunks hold about this many collidable points (the contact
data of a chunk's step stays in cache), within :data:`CPU_CHUNK_BOUNDS` worlds."""
CPU_CHUNK_BOUNDS = (16, 128)
# Rows per chunk of :func:`chunked_vmap` on the CPU: functions of one state (dynamics) have a
# smaller working set than a rollout, and 4096 humanoid states ran fastest in chunks of 8
# (µs per state, chunks of 8 / 64: ABA 6.1 / 8.0, RNEA 4.2 / 4.5, FK 1.1 / 1.7, CRBA 10.0 / 9.6),
# where rollouts through simulate_batch ran fastest in chunks of 1024 (see the module's
# docstring).
CPU_VMAP_CHUNK_SIZE = 8


def batch_mesh(devices: Sequence[jax.Device] | None = None) -> Mesh:
    """A one-axis mesh (``"batch"``) over ``devices`` (default: every device of every process)."""
    devices = jax.devices() if devices is None else list(devices)
    if not devices:
        raise ValueError("devices must not be empty")
    return Mesh(np.asarray(devices, dtype=object), (AXIS,))


def default_chunk_size(mesh: Mesh, model: Model) -> int | None:
    """On CPU devices, the worlds of ``model`` per chunk: the largest power of two at most
    :data:`CPU_CHUNK_POINTS` over its collidable points, within :data:`CPU_CHUNK_BOUNDS`;
    ``None`` (a plain vmap) on GPUs and TPUs."""
    if mesh.devices.flat[0].platform != "cpu":
        return None
    low, high = CPU_CHUNK_BOUNDS
    worlds = CPU_CHUNK_POINTS // max(len(model.point_link), 1)
    return int(min(max(1 << max(worlds.bit_length() - 1, 0), low), high))


def padded_size(batch: int, mesh: Mesh) -> int:
    """``batch`` rounded up to a multiple of the mesh's device count."""
    devices = mesh.devices.size
    return -(-batch // devices) * devices


def cpu_threads(mesh: Mesh, batch: int, threads: int | str = "auto") -> int:
    """How many slices of ``batch`` worlds :func:`simulate_batch` runs at once on ``mesh``.

    ``threads="auto"``: the cores this process may run on, where the mesh is one CPU device of
    a single process (else 1: several devices run one slice each); an integer is taken as it is.
    Never more than ``batch``.
    """
    if threads == "auto":
        single_cpu = mesh.devices.size == 1 and mesh.devices.flat[0].platform == "cpu" and jax.process_count() == 1
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        threads = cores if single_cpu else 1
    if not isinstance(threads, (int, np.integer)) or isinstance(threads, bool) or threads < 1:
        raise ValueError(f"threads must be a positive integer or 'auto', not {threads!r}")
    return int(min(threads, batch))


def local_rows(batch: int, mesh: Mesh) -> slice:
    """The rows of a (padded) batch of ``batch`` worlds that this process's devices simulate.

    With one process this is every row; with several, a contiguous block per process.
    """
    indices = NamedSharding(mesh, PartitionSpec(AXIS)).addressable_devices_indices_map((batch,))
    spans = sorted(index[0].indices(batch)[:2] for index in indices.values())
    start, stop = spans[0][0], spans[-1][1]
    if sum(b - a for a, b in spans) != stop - start:
        raise ValueError("this process's devices do not hold a contiguous block of the batch; order the devices by process")
    return slice(start, stop)


def _place(values: list[Any], shardings: list[NamedSharding], batched: list[bool]) -> list[jax.Array]:
    """``values`` as global arrays with ``shardings``.

    Arrays already laid out so stay as they are (e.g. the final states of a previous call, on
    every host); host data (numpy, or any other array with several processes) goes through
    ``jax.make_array_from_process_local_data``, each process passing only its own rows of a
    batched value; other device arrays of a single process move in one ``jax.device_put``.
    """
    placed: list[Any] = list(values)
    # Only the very same sharding passes through: an equivalent one of another kind (the
    # single-device arrays of a first call, where the next call passes this call's outputs)
    # would make jit compile the run a second time.
    done = {i for i, v in enumerate(values) if isinstance(v, jax.Array) and v.sharding == shardings[i]}
    single = jax.process_count() == 1
    with _SHARED_LOCK:
        for i, v in enumerate(values):
            if i not in done and not batched[i] and isinstance(v, jax.Array) and (id(v), shardings[i]) in _SHARED:
                placed[i] = _SHARED[id(v), shardings[i]][1]
                done.add(i)
    on_device = [i for i, v in enumerate(values) if i not in done and isinstance(v, jax.Array) and single]
    for i, array in zip(on_device, jax.device_put([values[i] for i in on_device], [shardings[i] for i in on_device])):
        placed[i] = array
        if not batched[i]:
            _remember(values[i], shardings[i], array)
    for i in sorted(set(range(len(values))) - done - set(on_device)):
        host = np.asarray(values[i])
        local = host[local_rows(host.shape[0], shardings[i].mesh)] if batched[i] else host
        placed[i] = jax.make_array_from_process_local_data(shardings[i], local, host.shape)
    return placed


_SHARED: dict[tuple[int, NamedSharding], tuple[jax.Array, jax.Array]] = {}
"""Shared device arrays (the model's and parameters' leaves) already placed by :func:`_place`:
``(id, sharding) -> (array, placed)``. The entry holds the array itself, so its ``id`` is not
reused while the entry lives; device arrays are immutable, so an entry never goes stale."""
SHARED_ENTRIES = 1024
"""The most entries :data:`_SHARED` keeps (the oldest go first)."""
_SHARED_LOCK = threading.Lock()  # the slices of :func:`_in_slices` place from several threads


def _remember(source: jax.Array, sharding: NamedSharding, placed: jax.Array) -> None:
    """Keep ``placed``, ``source`` on ``sharding``, for the next call that passes ``source``."""
    with _SHARED_LOCK:
        if len(_SHARED) >= SHARED_ENTRIES:
            del _SHARED[next(iter(_SHARED))]
        _SHARED[id(source), sharding] = (source, placed)


def _pad(value: Any, size: int) -> Any:
    """``value`` with its leading axis padded to ``size`` by repeating its last row."""
    missing = size - value.shape[0]
    if not missing:
        return value
    xp = np if isinstance(value, np.ndarray) else jnp
    return xp.concatenate([value, xp.repeat(value[-1:], missing, axis=0)])


def _batched_leaves(reference: Any, candidate: Any, batch: int, what: str) -> tuple[list[Any], tuple[bool, ...]]:
    """The leaves of ``candidate`` and, per leaf, whether it carries a leading batch axis.

    A leaf with the reference leaf's rank is shared; one with one more axis, of length ``batch``,
    is per world. Raises ValueError for anything else, or for a different tree structure.
    """
    ref_leaves, ref_def = jax.tree.flatten(reference)
    leaves, treedef = jax.tree.flatten(candidate)
    if treedef != ref_def:
        raise ValueError(f"{what} must have the structure of the unbatched one (same model, integrator, terrain kind)")
    flags = []
    for path, ref, leaf in zip(jax.tree_util.tree_flatten_with_path(reference)[0], ref_leaves, leaves):
        name = jax.tree_util.keystr(path[0])
        ref_ndim, ndim = np.ndim(ref), np.ndim(leaf)
        if ndim == ref_ndim:
            flags.append(False)
        elif ndim == ref_ndim + 1 and np.shape(leaf)[0] == batch:
            flags.append(True)
        else:
            raise ValueError(
                f"{what}{name} has shape {np.shape(leaf)}: expected {np.shape(ref)} (shared) or "
                f"({batch}, ...) with {ref_ndim + 1} axes (one value per world)"
            )
    return leaves, tuple(flags)


def _chunked_map(f: Any, xs: Any, size: int, chunk: int) -> Any:
    """``jax.vmap(f)(xs)`` over ``size`` rows, computed as a loop (``lax.map``) over equal chunks
    of at most ``chunk`` rows: the rows padded by repeating the last one (fewer than the number of
    chunks) and the padding's results dropped, so that one chunk's program is compiled, not a
    second for a shorter last chunk (written with explicit shapes so that empty arrays reshape too)."""
    loops = -(-size // chunk)
    chunk = -(-size // loops)
    extra = loops * chunk - size
    padded = jax.tree.map(lambda x: jnp.concatenate([x, jnp.repeat(x[-1:], extra, axis=0)]) if extra else x, xs)
    out = jax.lax.map(jax.vmap(f), jax.tree.map(lambda x: x.reshape(loops, chunk, *x.shape[1:]), padded))
    return jax.tree.map(lambda y: y.reshape(loops * chunk, *y.shape[2:])[:size], out)


def chunked_vmap(fn: Any, chunk_size: int | str | None = "auto") -> Any:
    """``jax.vmap(fn)`` over the leading axis of every argument, computed in chunks of
    ``chunk_size`` rows (``"auto"``: :data:`CPU_VMAP_CHUNK_SIZE` when the default backend is the
    CPU, one plain ``vmap`` otherwise; ``None``: one plain ``vmap``).

    On the CPU a chunk's working set stays in cache. Pass shared arguments (the model) by closure:
    ``chunked_vmap(lambda s, u: forward_dynamics(model, s, joint_torques=u))``.
    """
    if chunk_size == "auto":
        chunk_size = CPU_VMAP_CHUNK_SIZE if jax.default_backend() == "cpu" else None
    elif chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"chunk_size must be a positive integer, 'auto' or None, not {chunk_size!r}")

    def mapped(*args: Any) -> Any:
        sizes = {np.shape(leaf)[0] if np.ndim(leaf) else None for leaf in jax.tree.leaves(args)}
        if len(sizes) != 1 or None in sizes:
            raise ValueError(f"every argument leaf needs the same leading (batch) axis; got leading sizes {sorted(sizes, key=str)}")
        (size,) = sizes
        if chunk_size is None or chunk_size >= size:
            return jax.vmap(fn)(*args)
        return _chunked_map(lambda row: fn(*row), args, size, chunk_size)

    return mapped


@functools.lru_cache(maxsize=64)
def _compiled(
    mesh: Mesh,
    treedef: Any,
    flags: tuple[bool, ...],
    torques_batched: bool,
    chunk_size: int | None,
    batch: int,
    checkpoint: bool,
    trajectory: bool | Keep,
):
    """The jitted batched rollout for one static configuration."""
    padded = padded_size(batch, mesh)
    local = padded // mesh.devices.size

    def per_device(states, torques, varying, shared):
        def world(inputs):
            state, tau, own = inputs
            own, rest = iter(own), iter(shared)
            model, params = jax.tree.unflatten(treedef, [next(own) if f else next(rest) for f in flags])
            tau = torques if tau is None else tau
            if trajectory is True:
                return rollout(model, state, tau, params=params, checkpoint=checkpoint)
            keep = trajectory if isinstance(trajectory, Keep) else None
            final, summary, samples = monitored_rollout(model, state, tau, params=params, keep=keep, checkpoint=checkpoint)
            return (final, summary) if keep is None else (final, (summary, samples))

        inputs = (states, torques if torques_batched else None, varying)
        if chunk_size is None or chunk_size >= local:
            return jax.vmap(world)(inputs)
        return _chunked_map(world, inputs, local, chunk_size)

    rows, whole = PartitionSpec(AXIS), PartitionSpec()
    mapped = jax.shard_map(
        per_device,
        mesh=mesh,
        in_specs=(rows, rows if torques_batched else whole, rows, whole),
        out_specs=rows,
        check_vma=False,
    )

    def run(states, torques, varying, shared):
        result = mapped(states, torques, varying, shared)
        result = result if padded == batch else jax.tree.map(lambda x: x[:batch], result)
        if isinstance(trajectory, Keep) and trajectory.worlds is not None:
            final, (summary, samples) = result
            kept = np.asarray(trajectory.worlds)
            result = final, (summary, jax.tree.map(lambda x: x[kept], samples))
        return result

    return jax.jit(run)


def first_nonfinite_step(finite: jax.Array) -> jax.Array:
    """The index of the first ``False`` along the last axis of ``finite (..., T)`` (the
    ``StepOutput.finite`` of a rollout, batch axes first), -1 where every step is finite."""
    steps = finite.shape[-1]
    first = jnp.argmin(finite, axis=-1)
    return jnp.where(jnp.all(finite, axis=-1), -1, first) if steps else jnp.full(finite.shape[:-1], -1)


def simulate_batch(
    model: Model,
    states: State,
    joint_torques: Any,
    *,
    params: SimulationParams | None = None,
    batched_model: Model | None = None,
    batched_params: SimulationParams | None = None,
    devices: Sequence[jax.Device] | None = None,
    chunk_size: int | str | None = "auto",
    threads: int | str = "auto",
    checkpoint: bool = False,
    trajectory: bool | Keep = False,
) -> tuple[State, Summary | tuple[State, StepOutput] | tuple[Summary, dict[str, jax.Array]]]:
    """Simulate ``B`` worlds for ``T`` steps, the batch sharded over ``devices``.

    - ``states``: a :class:`State` whose arrays lead with the batch axis ``B`` (e.g. from
      ``jax.vmap(lambda q: State.build(model, joint_positions=q))(qs)``); host (numpy) or device arrays.
    - ``joint_torques``: ``(T, n)`` shared by every world, or ``(B, T, n)``.
    - ``params``: the :class:`SimulationParams` (default ``SimulationParams.build(model)``).
    - ``batched_model`` / ``batched_params``: ``model`` / ``params`` with some traced fields given
      per world, with a leading axis ``B`` (e.g. ``model.replace(link_mass=masses)`` with
      ``masses (B, N)``, or ``params.replace(contact=params.contact.replace(friction=mu))`` with
      ``mu (B,)``); fields with the unbatched shape stay shared.
    - ``devices``: the devices of the mesh (default ``jax.devices()``: all of them, every host).
    - ``chunk_size``: ``None`` (plain vmap per device), an integer (``lax.map`` over chunks of
      at most that many worlds per device) or ``"auto"`` (:func:`default_chunk_size`); see the module doc.
    - ``threads``: on a mesh of one CPU device, the batch in this many equal slices run at once
      from as many threads (``"auto"``: every core of this process, see :func:`cpu_threads`;
      1: one call); see the module doc.
    - ``checkpoint``: rematerialise each step in a backward pass (see :func:`jaxsim_like.rollout`).
    - ``trajectory``: what to keep besides the final states.

      - ``False`` (default): ``(final, summary)``, a :class:`~jaxsim_like.monitor.Summary` per
        world (``summary.first_nonfinite (B,)`` is the first step whose result was not finite,
        -1 where every step stayed finite; the deepest penetration; the last total contact
        force). Memory: the states and the statistics, whatever ``T``.
      - a :class:`~jaxsim_like.monitor.Keep`: ``(final, (summary, samples))``, ``samples`` a dict
        of the kept fields, each ``(K, T // every, ...)`` for the ``K`` kept worlds. Memory:
        what is kept (XLA's output buffers hold every world's samples before the worlds are
        selected, so run long batches in segments, as ``jaxsim-like simulate`` does).
      - ``True``: ``(final, (states, outputs))``, every state and output of every step stacked
        ``(B, T, ...)`` as ``jax.vmap(rollout)`` would (with ``first_nonfinite_step(outputs.finite)``
        giving the summary's first non-finite step). Memory grows with ``B T`` and the number
        of collidable points.

    ``final_states`` leads with ``B``. Compiled once per configuration (shapes, devices,
    chunking, which fields are batched, what is kept): new values never recompile.
    """
    batch = int(np.shape(states.base_position)[0]) if np.ndim(states.base_position) == 2 else 0
    if not batch:
        raise ValueError(f"states must lead with a batch axis: base_position has shape {np.shape(states.base_position)}")
    mesh = batch_mesh(devices)
    chunk = default_chunk_size(mesh, model) if chunk_size == "auto" else chunk_size
    if chunk is not None and (not isinstance(chunk, (int, np.integer)) or chunk < 1):
        raise ValueError(f"chunk_size must be a positive integer, None or 'auto', not {chunk_size!r}")
    params = SimulationParams.build(model) if params is None else params
    dtype = states.joint_positions.dtype
    torques = joint_torques if isinstance(joint_torques, jax.Array) else np.asarray(joint_torques, dtype)
    if torques.ndim == 2 and torques.shape[1] == model.dofs:
        torques_batched = False
    elif torques.ndim == 3 and torques.shape[0] == batch and torques.shape[2] == model.dofs:
        torques_batched = True
    else:
        raise ValueError(f"joint_torques must have shape (T, {model.dofs}) or ({batch}, T, {model.dofs}), got {tuple(torques.shape)}")
    for name, leaf in zip(State.__dataclass_fields__, jax.tree.leaves(states)):
        if np.shape(leaf)[:1] != (batch,):
            raise ValueError(f"every array of states must lead with the batch axis {batch}; {name} has shape {np.shape(leaf)}")

    candidate = (model if batched_model is None else batched_model, params if batched_params is None else batched_params)
    leaves, flags = _batched_leaves((model, params), candidate, batch, "batched parameters")
    treedef = jax.tree.structure((model, params))

    if isinstance(trajectory, Keep):
        if torques.shape[-2] % trajectory.every:
            raise ValueError(f"the number of steps ({torques.shape[-2]}) must be a multiple of Keep.every ({trajectory.every})")
        if trajectory.worlds is not None and not all(0 <= w < batch for w in trajectory.worlds):
            raise ValueError(f"Keep.worlds {list(trajectory.worlds)} must be indices of the {batch} worlds")
    elif not isinstance(trajectory, bool):
        raise ValueError(f"trajectory must be True, False or a Keep, not {trajectory!r}")
    workers = cpu_threads(mesh, batch, threads)
    if workers > 1:
        part = functools.partial(
            simulate_batch, model, params=params, devices=list(mesh.devices.flat), chunk_size=chunk, threads=1, checkpoint=checkpoint
        )
        return _in_slices(part, workers, batch, states, torques, torques_batched, treedef, leaves, flags, trajectory)

    padded = padded_size(batch, mesh)
    rows, whole = NamedSharding(mesh, PartitionSpec(AXIS)), NamedSharding(mesh, PartitionSpec())
    state_leaves, state_def = jax.tree.flatten(states)
    values = [_pad(leaf, padded) for leaf in state_leaves]
    values.append(_pad(torques, padded) if torques_batched else torques)
    values += [_pad(leaf, padded) for leaf, f in zip(leaves, flags) if f]
    values += [leaf for leaf, f in zip(leaves, flags) if not f]
    count, varying_count = len(state_leaves), sum(flags)
    batched = [True] * count + [torques_batched] + [True] * varying_count + [False] * (len(flags) - varying_count)
    placed = _place(values, [rows if b else whole for b in batched], batched)
    placed_states = jax.tree.unflatten(state_def, placed[:count])
    placed_torques = placed[count]
    varying, shared = placed[count + 1 : count + 1 + varying_count], placed[count + 1 + varying_count :]
    run = _compiled(mesh, treedef, flags, torques_batched, None if chunk is None else int(chunk), batch, checkpoint, trajectory)
    result = run(placed_states, placed_torques, varying, shared)
    return result


def _in_slices(
    part: Any,
    workers: int,
    batch: int,
    states: State,
    torques: Any,
    torques_batched: bool,
    treedef: Any,
    leaves: list[Any],
    flags: tuple[bool, ...],
    trajectory: bool | Keep,
) -> Any:
    """:func:`simulate_batch` as ``workers`` equal slices of the batch (padded by repeating its
    last world), each ``part(states, torques, batched_model=, batched_params=, trajectory=)`` on a
    thread of its own, the results joined along the batch axis and the padding stripped.

    A :class:`Keep` of some worlds keeps every world of each slice, then the kept ones (XLA's
    output buffers hold every world's samples in a single call too).
    """
    size = -(-batch // workers)
    padded = size * workers
    states = jax.tree.map(lambda leaf: _pad(leaf, padded), states)
    torques = _pad(torques, padded) if torques_batched else torques
    leaves = [_pad(leaf, padded) if f else leaf for leaf, f in zip(leaves, flags)]
    kept = trajectory.worlds if isinstance(trajectory, Keep) else None
    sliced_trajectory = dataclasses.replace(trajectory, worlds=None) if kept is not None else trajectory

    def run(i: int) -> Any:
        rows = slice(i * size, (i + 1) * size)
        model, params = jax.tree.unflatten(treedef, [leaf[rows] if f else leaf for leaf, f in zip(leaves, flags)])
        return part(
            jax.tree.map(lambda leaf: leaf[rows], states),
            torques[rows] if torques_batched else torques,
            batched_model=model,
            batched_params=params,
            trajectory=sliced_trajectory,
        )

    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(run, range(workers)))
    joined = jax.tree.map(lambda *slices: jnp.concatenate(slices)[:batch], *results)
    if kept is None:
        return joined
    final, (summary, samples) = joined
    return final, (summary, jax.tree.map(lambda x: x[np.asarray(kept)], samples))
