"""MJX (`mujoco-mjx`, MuJoCo in JAX) simulation step as a peer of benchmarks/step.py, in float32.

MJX computes in float32 (its default); benchmarks/step.py runs this module in a subprocess with
`JAX_ENABLE_X64=0`, since jax's x64 switch is process-wide.

Models:
- a URDF (the humanoid, the iCub) converted by MuJoCo's own URDF compiler, then given a free
  joint at the root, a ground plane, one unlimited motor (gear 1) per joint, and only the collision
  shapes jaxsim has points on (boxes and spheres; meshes and cylinders are dropped, visuals too,
  so no mesh file is needed). Robot geoms collide with the ground only (contype 1, conaffinity 0;
  the ground contype 0, conaffinity 1), as in jaxsim and jaxsim_like, which have no self-collision;
- MuJoCo's own humanoid (`mujoco/mjx/test_data/humanoid/humanoid.xml`, 21 joints, capsules),
  the model MJX is tuned on.

Every model gets the same options (SOLVER_OPTIONS): `timestep = dt`, the Euler integrator
(semi-implicit, as on the other sides) without implicit joint damping (`eulerdamp` off), the
Newton solver with 1 iteration and 4 line-search iterations (what MJX's humanoid sets). With one
iteration MJX skips its `while_loop`, so the rollout can be differentiated in reverse mode.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from lxml import etree
from mujoco import mjx

from benchmarks import timing

VERSION = mujoco.__version__
LIBRARY = "mjx"
SOLVER_OPTIONS = {"integrator": "Euler", "solver": "Newton", "iterations": 1, "ls_iterations": 4, "eulerdamp": False}
KEPT_GEOMETRIES = ("box", "sphere")
MUJOCO_HUMANOID = Path(mujoco.__file__).resolve().parent / "mjx" / "test_data" / "humanoid" / "humanoid.xml"


def _urdf_for_mujoco(urdf_path: str | Path, kept: Sequence[str]) -> str:
    """The URDF text without visuals and with only the collisions of type in `kept`, plus the
    MuJoCo compiler settings: keep every body (so the root can get a free joint), balance inertias."""
    root = etree.parse(str(urdf_path), etree.XMLParser(resolve_entities=False, no_network=True)).getroot()
    for element in list(root.iter("visual")) + list(root.iter("collision")):
        geometry = element.find("geometry")
        shape = geometry[0].tag if geometry is not None and len(geometry) else None
        if element.tag == "visual" or shape not in kept:
            element.getparent().remove(element)
    extension = etree.SubElement(root, "mujoco")
    etree.SubElement(extension, "compiler", balanceinertia="true", discardvisual="true", fusestatic="false")
    return etree.tostring(root, encoding="unicode")


def mjcf_from_urdf(urdf_path: str | Path, kept: Sequence[str] = KEPT_GEOMETRIES) -> str:
    """MJCF text of a floating-base URDF: free joint at the root, ground plane, motors, ground-only collisions."""
    converted = mujoco.MjModel.from_xml_string(_urdf_for_mujoco(urdf_path, kept))
    with tempfile.TemporaryDirectory() as directory:
        scratch = Path(directory) / "converted.xml"
        mujoco.mj_saveLastXML(str(scratch), converted)
        mjcf = etree.fromstring(scratch.read_bytes())
    compiler = mjcf.find("compiler")
    compiler.set("fusestatic", "true")
    worldbody = mjcf.find("worldbody")
    bodies = worldbody.findall("body")
    if len(bodies) != 1:
        raise ValueError(f"{urdf_path}: expected one root body under MuJoCo's worldbody, found {len(bodies)}")
    bodies[0].insert(0, etree.Element("freejoint", name="root"))
    for geom in worldbody.iter("geom"):
        geom.set("contype", "1")
        geom.set("conaffinity", "0")
    worldbody.insert(0, etree.Element("geom", name="ground", type="plane", size="0 0 1", contype="0", conaffinity="1"))
    actuator = etree.SubElement(mjcf, "actuator")
    for joint in worldbody.iter("joint"):
        if joint.get("type", "hinge") in ("hinge", "slide"):
            etree.SubElement(actuator, "motor", name=joint.get("name"), joint=joint.get("name"), gear="1", ctrllimited="false")
    return etree.tostring(mjcf, encoding="unicode")


def load(source: str | Path, dt: float) -> mujoco.MjModel:
    """A MuJoCo model from MJCF text or an MJCF/URDF path (a URDF is converted with mjcf_from_urdf),
    with SOLVER_OPTIONS and `timestep = dt` [s]."""
    text = str(source)
    if not text.lstrip().startswith("<"):
        path = Path(text)
        model = (
            mujoco.MjModel.from_xml_string(mjcf_from_urdf(path))
            if path.suffix == ".urdf"
            else mujoco.MjModel.from_xml_path(str(path))
        )
    else:
        model = mujoco.MjModel.from_xml_string(text)
    model.opt.timestep = dt
    model.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    model.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
    model.opt.iterations = SOLVER_OPTIONS["iterations"]
    model.opt.ls_iterations = SOLVER_OPTIONS["ls_iterations"]
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_EULERDAMP
    return model


def joint_names(model: mujoco.MjModel) -> list[str]:
    """Names of the actuated (hinge and slide) joints, in qpos order."""
    kinds = {int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)}  # enum members never equal numpy ints
    return [model.joint(i).name for i in range(model.njnt) if int(model.jnt_type[i]) in kinds]


def ground_colliders(model: mujoco.MjModel) -> tuple[int, list[int]]:
    """The ground plane's geom id and the ids of the robot geoms that can collide with it
    (by contype/conaffinity or by an explicit contact pair)."""
    planes = np.flatnonzero((model.geom_type == mujoco.mjtGeom.mjGEOM_PLANE) & (model.geom_bodyid == 0))
    if planes.size != 1:
        raise ValueError(f"expected one ground plane in the world body, found {planes.size}")
    ground = int(planes[0])
    colliders = {
        g
        for g in range(model.ngeom)
        if model.geom_bodyid[g] != 0
        and (model.geom_contype[g] & model.geom_conaffinity[ground] or model.geom_contype[ground] & model.geom_conaffinity[g])
    }
    for first, second in zip(model.pair_geom1, model.pair_geom2):
        if ground in (first, second):
            colliders.add(int(second if first == ground else first))
    return ground, sorted(colliders)


def _ground_distance(model: mujoco.MjModel, data: mujoco.MjData) -> float:
    """Smallest signed distance [m] from the ground to any geom that collides with it."""
    ground, colliders = ground_colliders(model)
    return min(mujoco.mj_geomDistance(model, data, ground, g, 10.0, None) for g in colliders)


def standing_qpos(model: mujoco.MjModel, depth: float = 1e-3) -> np.ndarray:
    """`qpos0` with joints at zero, the base upright and lowered or raised so that the lowest
    colliding geom sinks `depth` [m] into the ground."""
    data = mujoco.MjData(model)
    qpos = model.qpos0.copy()
    qpos[:3] = [0.0, 0.0, 2.0]
    qpos[3:7] = [1.0, 0.0, 0.0, 0.0]
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    qpos[2] -= _ground_distance(model, data) + depth
    return qpos


def active_contacts(model: mujoco.MjModel, qpos: np.ndarray) -> dict:
    """Contacts MuJoCo finds at `qpos`: how many, and how many penetrate (distance < 0)."""
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    distances = np.array([data.contact[i].dist for i in range(data.ncon)])
    return {"contacts": int(data.ncon), "penetrating": int((distances < 0).sum())}


def step(model: mjx.Model, data: mjx.Data, ctrl: jax.Array) -> mjx.Data:
    """One `mjx.step` with motor commands (= joint torques) `ctrl (n,)`."""
    return mjx.step(model, data.replace(ctrl=ctrl))


def final_base_height(model: mjx.Model, data: mjx.Data, ctrl: jax.Array) -> jax.Array:
    """Base height [m] after `T` steps with `ctrl (T, n)`, the steps in one `lax.scan`."""
    final, _ = jax.lax.scan(lambda current, u: (step(model, current, u), None), data, ctrl)
    return final.qpos[2]


def subject(
    source: str | Path,
    dt: float,
    joint_offsets: Callable[[Sequence[str], int], np.ndarray],
    label: str = LIBRARY,
    depth: float = 1e-3,
) -> timing.StepSubject:
    """The MJX step of `source` (URDF or MJCF, see load) standing on the ground, its lowest
    colliding geom `depth` [m] deep.

    `joint_offsets(names, size) -> (size, n)` gives the joint positions of the batched states
    (columns in the order of `names`), added to the standing `qpos`.
    """
    host_model = load(source, dt)
    names = joint_names(host_model)
    qpos = standing_qpos(host_model, depth)
    model = mjx.put_model(host_model)
    host_data = mujoco.MjData(host_model)
    host_data.qpos[:] = qpos
    data = mjx.put_data(host_model, host_data)
    joint_address = np.array([host_model.jnt_qposadr[host_model.joint(name).id] for name in names], dtype=int)

    def build(joint_positions: jax.Array) -> mjx.Data:
        return data.replace(qpos=data.qpos.at[joint_address].add(joint_positions))

    build_batch = jax.jit(jax.vmap(build))

    def batch(size: int) -> tuple:
        offsets = jnp.asarray(joint_offsets(names, size), dtype=data.qpos.dtype)
        return build_batch(offsets), jnp.zeros((size, host_model.nu), data.qpos.dtype)

    info = {
        "dtype": str(data.qpos.dtype),
        "geoms_on_ground": len(ground_colliders(host_model)[1]),
        "nv": int(host_model.nv),
        **active_contacts(host_model, qpos),
        **SOLVER_OPTIONS,
    }
    return timing.StepSubject(
        library=label,
        constants=model,
        state=data,
        torques=jnp.zeros(host_model.nu, data.qpos.dtype),
        step=step,
        batch=batch,
        final_loss=final_base_height,
        info=info,
    )
