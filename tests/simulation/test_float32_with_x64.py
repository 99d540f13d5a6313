"""Float32 worlds with JAX's 64-bit types on (this session's setting): the state's dtype decides,
not the global flag. A world of six bodies touching each other and the terrain (box-box,
sphere-hull, cylinder-box and capsule-cylinder contacts) and a single model's step keep every
state leaf and every output in float32 over a few steps, and their states equal those of the
same float32 runs traced with 64-bit types off, to within what one ulp more or less in the start
state changes in the end state."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from collision_worlds import body

import jaxsim_like as js
from jaxsim_like.simulation.world import WorldModel, world_rollout

DT, STEPS = 0.002, 10
CUBE = [(x, y, z) for x in (-0.1, 0.1) for y in (-0.1, 0.1) for z in (-0.1, 0.1)]  # a 0.2 m cube's corners
CUBE_FACES = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
# Each body sinks 0.2 mm into the one below it: a slab on the terrain, a box cube on the slab, a
# can on the box, a capsule standing on the can, and a hull cube on the terrain with a ball on it.
BODIES = (("slab", [0.0, 0.0, 0.0498]), ("cube", [-0.15, 0.0, 0.1996]), ("hull", [0.45, 0.0, 0.0998]),
          ("can", [-0.15, 0.0, 0.4494]), ("rod", [-0.15, 0.0, 0.8492]), ("ball", [0.45, 0.0, 0.2994]))
TOUCHING = {(0, 1), (1, 3), (3, 4), (2, 5)}  # global links (BODIES' order) of the pairs that touch
# The two traces do the same float32 arithmetic but differ in their integer index types and in
# scalars selected as weak float64 before their cast, so that XLA may order some float32
# operations differently (more so at the suite's backend optimisation level 0, tests/conftest.py):
# rounding, a few ulps a step, which the stiff contacts grow over the steps, by as much as a
# rounding of the start state grows (measured: moving every float of the world's start by one ulp
# moves a body's end velocity by 3.6e-4 m/s, where its two traces differ by 1e-6). So each leaf's
# tolerance is ATOL (8 float32 ulps of 1: m, m/s, rad, rad/s) and RTOL (42 to 84 ulps of the value
# itself, for the pair loads [N]) plus SPREAD times the most that leaf moves in the runs of
# ``NUDGES`` (the start state's every float one ulp up, or down, in the trace with x64 on).
RTOL, ATOL, SPREAD = 1e-5, 1e-6, 2.0
NUDGES = (jnp.inf, -jnp.inf)


def _float32(tree):
    """``tree`` with its floating-point leaves cast to float32."""
    return jax.tree.map(lambda x: x.astype(jnp.float32) if jnp.issubdtype(x.dtype, jnp.floating) else x, tree)


def _floats(tree) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree.leaves(tree) if jnp.issubdtype(x.dtype, jnp.floating)]


def _hull(path: str) -> js.Model:
    """A free 1 kg link whose collision is the mesh at ``path``, as a hull."""
    return js.load_model(
        f"""<robot name="hull"><link name="link"><inertial><mass value="1"/>
        <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
        <collision><geometry><mesh filename="{path}"/></geometry></collision></link></robot>""",
        contact_sampling=js.ContactSampling(mesh_hulls=8),
    )


def _nudged(tree, towards: float):
    """``tree`` with each floating-point leaf's every value moved one ulp towards ``towards``."""
    return jax.tree.map(lambda x: jnp.nextafter(x, jnp.full_like(x, towards)) if jnp.issubdtype(x.dtype, jnp.floating) else x, tree)


def _world_run(mesh: str):
    """The world of ``BODIES`` (the hull: the mesh at ``mesh``) in float32 stepped ``STEPS`` times:
    the jitted run (start state to final state and stacked outputs) and its start state."""
    models = [_hull(mesh) if name == "hull" else body(name) for name, _ in BODIES]
    world = _float32(WorldModel.build(models, dt=DT))
    state = _float32(world.initial_state([js.State.build(m, base_position=p) for m, (_, p) in zip(models, BODIES)]))
    return jax.jit(lambda s: world_rollout(world, s, None, STEPS)), state


def _model_run():
    """The quadruped in float32 stepped ``STEPS`` times by :func:`jaxsim_like.rollout` (its feet on
    the ground): the jitted run (start state to final state and stacked outputs) and its start state."""
    model = _float32(js.load_model(js.models.path("quadruped")))
    params = _float32(js.SimulationParams.build(model, dt=DT))
    state = _float32(js.State.build(model, base_position=[0.0, 0.0, 0.42]))
    return jax.jit(lambda s: js.rollout(model, s, jnp.zeros((STEPS, model.dofs), jnp.float32), params=params)), state


def _write_mesh(folder: Path) -> str:
    """The cube's OBJ file in ``folder``."""
    path = folder / "cube.obj"
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in CUBE)
                    + "".join("f " + " ".join(str(i + 1) for i in face) + "\n" for face in CUBE_FACES))
    return str(path)


def _runs(mesh: str) -> dict:
    """``{name: (jitted run, start state)}`` of both runs, traced with this process' setting of 64-bit types."""
    return {"world": _world_run(mesh), "model": _model_run()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each run traced with 64-bit types on (here) and off (this file run as a script in a process
    with x64 off, while this one traces and compiles its runs: switching the setting in one
    process after tracing reuses what JAX cached in the other mode): ``{name: (on, final state's
    floating-point leaves off, those leaves of the runs from each of the ``NUDGES`` start states on)}``."""
    assert jax.config.jax_enable_x64
    folder = tmp_path_factory.mktemp("float32")
    mesh = _write_mesh(folder)
    env = {**os.environ, "JAX_ENABLE_X64": "0"}
    with open(folder / "off.log", "w") as log:
        process = subprocess.Popen([sys.executable, __file__, mesh, str(folder / "off.npz")], stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            runs = {name: (run(state), [_floats(run(_nudged(state, towards))[0]) for towards in NUDGES])
                    for name, (run, state) in _runs(mesh).items()}
            process.wait(timeout=600)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == 0, (folder / "off.log").read_text()[-2000:]
    off = np.load(folder / "off.npz")
    return {name: (on, [off[f"{name}_{k}"] for k in range(len(off.files)) if f"{name}_{k}" in off.files], nudged)
            for name, (on, nudged) in runs.items()}


@pytest.mark.parametrize("name", ["world", "model"])
def test_a_float32_run_stays_float32_with_64_bit_types_on(runs, name):
    """Every floating-point leaf of the final state and of the outputs is float32."""
    on = runs[name][0]
    dtypes = {x.dtype for x in _floats(on)}
    assert dtypes == {np.dtype(np.float32)}


def test_the_world_touches_in_every_narrow_phase(runs):
    """The world's pairs touch from the first step to the last (the narrow phases ran on contact)."""
    on = runs["world"][0]
    contacts = on[1].pairs.contacts
    active = np.asarray(contacts.active)
    links = np.stack([np.asarray(contacts.link_a), np.asarray(contacts.link_b)], axis=-1)
    for step in (0, STEPS - 1):
        touching = {tuple(sorted(int(k) for k in pair)) for pair in links[step][active[step]]}
        assert touching == TOUCHING


@pytest.mark.parametrize("name", ["world", "model"])
def test_a_float32_run_equals_the_run_with_64_bit_types_off(runs, name, figures):
    """The final states of the two traces agree to float32 rounding (``RTOL``, ``ATOL``, ``SPREAD``)."""
    on, reference, nudged = runs[name]
    ours = _floats(on[0])
    assert len(ours) == len(reference)
    spreads = [max(float(np.max(np.abs(a - n[k]), initial=0.0)) for n in nudged) for k, a in enumerate(ours)]
    worst = max((float(np.max(np.abs(a - b), initial=0.0)) for a, b in zip(ours, reference)), default=0.0)
    figures(f"float32 {name} run, x64 on against off: largest state difference", worst)
    figures(f"float32 {name} run, x64 on, start one ulp off: largest state difference", max(spreads, default=0.0))
    for a, b, spread in zip(ours, reference, spreads):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL + SPREAD * spread)


if __name__ == "__main__":  # the runs with x64 off (JAX_ENABLE_X64=0), for the fixture above
    finals = {name: _floats(run(state)[0]) for name, (run, state) in _runs(sys.argv[1]).items()}
    np.savez(sys.argv[2], **{f"{name}_{k}": x for name, leaves in finals.items() for k, x in enumerate(leaves)})
