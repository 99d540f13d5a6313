"""The ScenarIO-style object API: ``Simulator``, ``World``, ``Model``, ``Link``, ``Joint``.

For users of gym-ignition's ScenarIO: the same class names, method names, arguments, return
values (True or False, tuples) and behaviour (``scenario.core`` and ``scenario.gazebo`` merged
in one namespace), computed in float64, plus Gazebo Sim's link and joint queries. See
``docs/object_api.md`` for the differences and the honest exceptions (GUI, shared-library
plugins, Fuel downloads).

    from jaxsim_like import api

    simulator = api.Simulator(step_size=0.001, rtf=float("inf"), steps_per_run=1)
    assert simulator.initialize()
    world = simulator.get_world()
    assert world.set_physics_engine(api.PhysicsEngine_dart)  # the empty world has no physics
    assert world.insert_model(api.get_ground_plane(), override_model_name="ground_plane")
    assert world.insert_model(path_to_urdf, api.Pose((0, 0, 1)), "robot")
    assert simulator.run(paused=True)
"""

from .errors import (
    DOFIndexError,
    DOFMismatch,
    JointError,
    JointNotFound,
    LinkError,
    LinkNotFound,
    ModelError,
    ModelNotFound,
    NotImplementedError,
    SimulatorError,
    WorldError,
)
from .joint import Joint
from .link import Link
from .model import Model
from .scenery import AxisAlignedBox
from .simulator import Simulator
from .types import *
from .types import (
    PID,
    Contact,
    ContactPoint,
    JointControlMode,
    JointControlMode_force,
    JointControlMode_idle,
    JointControlMode_invalid,
    JointControlMode_position,
    JointControlMode_position_interpolated,
    JointControlMode_velocity,
    JointControlMode_velocity_follower_dart,
    JointLimit,
    JointType,
    JointType_ball,
    JointType_fixed,
    JointType_invalid,
    JointType_prismatic,
    JointType_revolute,
    Limit,
    PhysicsEngine,
    PhysicsEngine_dart,
    PhysicsEngine_rk4,
    PhysicsEngine_semi_implicit_euler,
    PhysicsEngine_implicit_euler,
    Pose,
    Pose_identity,
    PosePair,
    Verbosity,
    Verbosity_debug,
    Verbosity_error,
    Verbosity_info,
    Verbosity_suppress_all,
    Verbosity_warning,
)
from .utils import (
    ToGazeboJoint,
    ToGazeboLink,
    ToGazeboModel,
    ToGazeboWorld,
    denormalize,
    find_sdf_file,
    get_empty_world,
    get_ground_plane,
    get_install_prefix,
    get_model_file_from_fuel,
    get_model_name_from_sdf,
    get_random_string,
    get_sdf_string,
    get_world_name_from_sdf,
    insert_plugin_to_gazebo_entity,
    normalize,
    sdf_string_valid,
    set_verbosity,
    urdffile_to_sdfstring,
    urdfstring_to_sdfstring,
)
from .world import World

GazeboSimulator = Simulator

__all__ = [
    "PID",
    "AxisAlignedBox",
    "Contact",
    "ContactPoint",
    "DOFIndexError",
    "DOFMismatch",
    "GazeboSimulator",
    "Joint",
    "JointControlMode",
    "JointControlMode_force",
    "JointControlMode_idle",
    "JointControlMode_invalid",
    "JointControlMode_position",
    "JointControlMode_position_interpolated",
    "JointControlMode_velocity",
    "JointControlMode_velocity_follower_dart",
    "JointError",
    "JointLimit",
    "JointNotFound",
    "JointType",
    "JointType_ball",
    "JointType_fixed",
    "JointType_invalid",
    "JointType_prismatic",
    "JointType_revolute",
    "Limit",
    "Link",
    "LinkError",
    "LinkNotFound",
    "Model",
    "ModelError",
    "ModelNotFound",
    "NotImplementedError",
    "PhysicsEngine",
    "PhysicsEngine_dart",
    "PhysicsEngine_rk4",
    "PhysicsEngine_semi_implicit_euler",
    "PhysicsEngine_implicit_euler",
    "Pose",
    "PosePair",
    "Pose_identity",
    "Simulator",
    "SimulatorError",
    "ToGazeboJoint",
    "ToGazeboLink",
    "ToGazeboModel",
    "ToGazeboWorld",
    "Verbosity",
    "Verbosity_debug",
    "Verbosity_error",
    "Verbosity_info",
    "Verbosity_suppress_all",
    "Verbosity_warning",
    "World",
    "WorldError",
    "denormalize",
    "find_sdf_file",
    "get_empty_world",
    "get_ground_plane",
    "get_install_prefix",
    "get_model_file_from_fuel",
    "get_model_name_from_sdf",
    "get_random_string",
    "get_sdf_string",
    "get_world_name_from_sdf",
    "insert_plugin_to_gazebo_entity",
    "normalize",
    "sdf_string_valid",
    "set_verbosity",
    "urdffile_to_sdfstring",
    "urdfstring_to_sdfstring",
]
