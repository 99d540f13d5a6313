"""jaxsim (PyPI) as a benchmark peer, through its public API (`jaxsim.api`), in mixed representation.

jaxsim reads URDF by converting it to SDF with Gazebo's `ign sdf` (Debian: ignition-tools,
libsdformat-dev). Debian's sdformat 12 writes SDF 1.9, older than the 1.10 that rod's import-time
check asks for, so ROD_SKIP_SDFORMAT_CHECK=1 is needed: it is set here before jaxsim is imported.
Importing jaxsim turns on jax_enable_x64 (unless JAX_ENABLE_X64=0).
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

from benchmarks import states as st
from benchmarks import timing

VERSION = jaxsim.__version__


def load(urdf_path: str) -> js.model.JaxSimModel:
    """The URDF as a floating-base jaxsim model."""
    return js.model.JaxSimModel.build_from_model_description(model_description=str(urdf_path))


def joint_names(model: js.model.JaxSimModel) -> list[str]:
    """Joint names in jaxsim's DoF order."""
    return list(model.joint_names())


def build_data(model: js.model.JaxSimModel, state: dict) -> js.data.JaxSimModelData:
    """jaxsim data for one state of benchmarks.states (mixed representation); vmap-able."""
    return js.data.JaxSimModelData.build(
        model=model,
        base_position=state["base_position"],
        base_quaternion=state["base_quaternion"],
        base_linear_velocity=state["base_velocity"][:3],
        base_angular_velocity=state["base_velocity"][3:],
        joint_positions=state["joint_positions"],
        joint_velocities=state["joint_velocities"],
        velocity_representation=VelRepr.Mixed,
    )


def _inputs(state: dict) -> dict:
    keys = ("joint_torques", "base_acceleration", "joint_accelerations")
    return {key: jnp.asarray(state[key]) for key in keys}


def functions() -> dict[str, Callable]:
    """The four algorithms as `fn(model, data, inputs)`; inputs holds torques and accelerations."""
    return {
        "FK": lambda model, data, inputs: js.model.forward_kinematics(model, data),
        "RNEA": lambda model, data, inputs: js.model.inverse_dynamics(
            model,
            data,
            base_acceleration=inputs["base_acceleration"],
            joint_accelerations=inputs["joint_accelerations"],
        ),
        "CRBA": lambda model, data, inputs: js.model.free_floating_mass_matrix(model, data),
        "ABA": lambda model, data, inputs: js.model.forward_dynamics_aba(
            model, data, joint_forces=inputs["joint_torques"]
        ),
    }


def aba(model: js.model.JaxSimModel, state: dict) -> tuple[np.ndarray, np.ndarray]:
    """Forward dynamics of one state: (mixed base acceleration (6,), joint accelerations)."""
    base, joints = jax.jit(functions()["ABA"])(model, build_data(model, state), _inputs(state))
    return np.asarray(base), np.asarray(joints)


def timings(
    urdf_path: str,
    num_states: int = 64,
    sizes: Sequence[int] = timing.BATCH_SIZES,
    quick: bool = False,
    seed: int = 0,
) -> list[dict]:
    """Compile, dispatched, in-graph and vmapped timings of FK, RNEA, CRBA, ABA (see benchmarks.timing)."""
    model = load(urdf_path)
    states = st.random_states(model.dofs(), num_states, seed)
    return timing.time_algorithms("jaxsim", model, states, build_data, _inputs, functions(), sizes=sizes, quick=quick)


def load_time(urdf_path: str, repeats: int = 2) -> dict:
    """Seconds of `build_from_model_description` (URDF -> SDF via `ign sdf`, meshes): first and median."""
    return timing.first_and_median(lambda: load(urdf_path), repeats)
