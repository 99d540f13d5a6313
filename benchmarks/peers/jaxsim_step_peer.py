"""jaxsim (PyPI) simulation step as a peer of benchmarks/step.py, through `jaxsim.api.model.step`.

The model gets jaxsim's defaults except the step: `time_step=dt`, the soft-contact model
(`SoftContacts` with its default parameters, K = 1e6, D = 2e3, mu = 0.5, p = q = 0.5) and
semi-implicit Euler (`IntegratorType.SemiImplicitEuler`, jaxsim's default). The state is in mixed
representation, as in the dynamics benchmark.

Collidable points are jaxsim's: 8 corners per box and `JAXSIM_COLLISION_SPHERE_POINTS` (50)
Fibonacci points per sphere; cylinders are skipped, and meshes too unless
`JAXSIM_COLLISION_MESH_ENABLED=1` (left off here). See benchmarks/README.md for the environment
variables set below.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

os.environ.setdefault("ROD_SKIP_SDFORMAT_CHECK", "1")
os.environ.setdefault("JAXSIM_LOGGING_LEVEL", "ERROR")

import jax
import jax.numpy as jnp
import jaxsim
import jaxsim.api as js
import numpy as np
from jaxsim import VelRepr
from jaxsim.rbda.contacts import SoftContacts

from benchmarks import timing

VERSION = jaxsim.__version__
LIBRARY = "jaxsim"


def load(urdf_path: str, dt: float) -> js.model.JaxSimModel:
    """The URDF as a floating-base jaxsim model stepping by `dt` [s] with default soft contacts."""
    return js.model.JaxSimModel.build_from_model_description(
        model_description=str(urdf_path),
        time_step=dt,
        contact_model=SoftContacts.build(),
        integrator=js.model.IntegratorType.SemiImplicitEuler,
    )


def joint_names(model: js.model.JaxSimModel) -> list[str]:
    """Joint names in jaxsim's DoF order."""
    return list(model.joint_names())


def build_data(model: js.model.JaxSimModel, base_position: jax.Array, joint_positions: jax.Array) -> js.data.JaxSimModelData:
    """A state at rest: base at `base_position` (identity orientation), joints at `joint_positions`; vmap-able."""
    return js.data.JaxSimModelData.build(
        model=model,
        base_position=base_position,
        base_quaternion=jnp.array([1.0, 0.0, 0.0, 0.0]),
        joint_positions=joint_positions,
        velocity_representation=VelRepr.Mixed,
    )


def point_positions(model: js.model.JaxSimModel, data: js.data.JaxSimModelData) -> np.ndarray:
    """World positions `(P, 3)` of the collidable points."""
    return np.asarray(js.contact.collidable_point_positions(model, data))


def number_of_points(model: js.model.JaxSimModel) -> int:
    """How many collidable points the model has."""
    return len(model.kin_dyn_parameters.contact_parameters.body)


def step(model: js.model.JaxSimModel, data: js.data.JaxSimModelData, torques: jax.Array) -> js.data.JaxSimModelData:
    """One `js.model.step` with joint torques `torques (n,)`."""
    return js.model.step(model, data, joint_force_references=torques)


def final_base_height(model: js.model.JaxSimModel, data: js.data.JaxSimModelData, torques: jax.Array) -> jax.Array:
    """Base height [m] after `T` steps with `torques (T, n)`, the steps in one `lax.scan`."""
    final, _ = jax.lax.scan(lambda current, tau: (step(model, current, tau), None), data, torques)
    return final.base_position[2]


def subject(
    urdf_path: str,
    dt: float,
    base_position: np.ndarray,
    joint_offsets: Callable[[Sequence[str], int], np.ndarray],
) -> tuple[timing.StepSubject, js.model.JaxSimModel]:
    """The step of the URDF standing at `base_position`, and the model.

    `joint_offsets(names, size) -> (size, n)` gives the joint positions of the batched states,
    columns in the order of `names`.
    """
    model = load(urdf_path, dt)
    names = joint_names(model)
    base = jnp.asarray(base_position, dtype=float)
    data = build_data(model, base, jnp.zeros(model.dofs()))
    build_batch = jax.jit(jax.vmap(build_data, in_axes=(None, None, 0)))

    def batch(size: int) -> tuple:
        return build_batch(model, base, jnp.asarray(joint_offsets(names, size))), jnp.zeros((size, model.dofs()))

    info = {"dtype": str(data.joint_positions.dtype), "points": number_of_points(model), "contact_model": "SoftContacts (defaults)"}
    return (
        timing.StepSubject(
            library=LIBRARY,
            constants=model,
            state=data,
            torques=jnp.zeros(model.dofs()),
            step=step,
            batch=batch,
            final_loss=final_base_height,
            info=info,
        ),
        model,
    )
