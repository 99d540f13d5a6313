"""What an MJCF file asks MuJoCo to simulate and a model read here leaves out, told at load time.

Errors (:func:`flex_problems`, with the other unsupported elements of :mod:`.mjcf`): flexes
(cloth, soft bodies), whose vertices would load as free particles without their elasticity.

Located warnings (:func:`warn_left_out`), one per kind, naming every element of that kind:

- the world body's geoms that bodies touch other than its floor, boxes and planes (the terrain,
  :mod:`.mjcf_terrain`): spheres, capsules, cylinders, ellipsoids, meshes, height fields; and,
  where the file is read as one model (which has no terrain), a floor off z = 0 and the static
  boxes that the world's description holds, where bodies touch them;
- geoms of bodies whose shape is not read (height fields, signed distance fields);
- geoms' surface velocities (``surfacevel``, conveyor belts);
- plugins that act on the bodies (elasticity, SDF shapes): those of actuators are dropped with the
  actuators (:mod:`.mjcf_actuators`), those of sensors change nothing simulated;
- bodies' gravity compensation, free joints' damping and friction loss, and the limits and
  equalities enforced here where the file disables constraints.
"""

from __future__ import annotations

import numpy as np

from .description import SourceLocation
from .mjcf_contacts import floor_geoms, geom_label, touches_bodies, warn_located
from .mjcf_terrain import static_boxes

_FREE = 0  # mjtJoint
_READ_SHAPES = {0, 2, 3, 4, 5, 6, 7}  # mjtGeom: plane, sphere, capsule, ellipsoid, cylinder, box, mesh
_SHAPE_NAMES = {0: "plane", 1: "hfield", 2: "sphere", 3: "capsule", 4: "ellipsoid", 5: "cylinder", 6: "box", 7: "mesh", 8: "sdf"}
_LISTED = 6  # names listed in one warning before "and N more"


def flex_problems(reader) -> list[tuple[SourceLocation, str]]:
    """Each flex of ``reader``'s model (``mjcf._Reader``) as an unsupported element."""
    m, problems = reader.m, []
    for f in range(int(m.nflex)):
        name = reader.name("flex", f)
        label = f"'{name}'" if name else f"#{f}"
        tag = next((tag for tag in ("flexcomp", "flex") if (tag, name or None) in reader.lines), None)
        where = SourceLocation(file=reader.file, line=reader.lines.get((tag, name or None)) if tag else None,
                               element=f'<{tag or "flex"} name="{name}">' if name else f"<{tag or 'flex'}>")
        problems.append((where, f"flex {label} (a deformable body of {int(m.flex_vertnum[f])} vertices) is not supported yet"))
    return problems


def warn_left_out(reader, world: bool) -> None:
    """Located warnings for what ``reader``'s model leaves out of what MuJoCo would simulate (see
    the module docstring), as a world's models and terrain (``world``, :func:`.mjcf.parse_mjcf_world`)
    or as one model, which has no terrain."""
    m = reader.m
    if m.opt.disableflags & int(reader.mujoco.mjtDisableBit.mjDSBL_CONSTRAINT):
        held = int(m.jnt_limited.sum() + m.tendon_limited.sum() + m.eq_active0.sum())
        if held:
            _warn_at_tag(reader, "option", f"constraints are disabled, but the {held} joint and tendon limits and equalities are enforced here")
    for b in np.flatnonzero(np.asarray(m.body_gravcomp) != 0.0):
        message = f"the gravity compensation (gravcomp={float(m.body_gravcomp[b]):g}) of body '{reader.body(int(b))}' is not represented: ignored"
        warn_located(message, reader.where("body", reader.body(int(b))))
    for j in range(m.njnt):
        dofs = slice(int(m.jnt_dofadr[j]), int(m.jnt_dofadr[j]) + 6)
        if m.jnt_type[j] == _FREE and (np.any(m.dof_damping[dofs] > 0.0) or np.any(m.dof_frictionloss[dofs] > 0.0)):
            warn_located(f"the damping and friction loss of free joint '{reader.joint(j)}' are not represented: ignored", reader.where("joint", reader.joint(j)))
    if reader.rules is not None:
        _warn_static_geometry(reader, world)
        _warn_geoms(reader, [g for g in range(m.ngeom) if m.geom_bodyid[g] and int(m.geom_type[g]) not in _READ_SHAPES and touches_bodies(m, g)],
                    "{count} geom(s) of a shape not read here (height field, signed distance field) are not collision shapes: {names}: ignored")
        _warn_geoms(reader, [g for g in range(m.ngeom) if np.any(np.asarray(m.geom_surfacevel[g]) != 0.0)],
                    "the surface velocity (surfacevel) of {count} geom(s) is not represented: {names}: ignored")
    _warn_plugins(reader)


def _warn_static_geometry(reader, world: bool) -> None:
    m = reader.m
    floors, boxes = floor_geoms(m), static_boxes(m)
    ground = floors[0] if floors else None
    kept = set(boxes) | {ground}
    _warn_geoms(reader, [g for g in range(m.ngeom) if m.geom_bodyid[g] == 0 and g not in kept and touches_bodies(m, g)],
                "{count} geom(s) of the world body that bodies touch are not represented: {names}; bodies pass through them (the "
                "world body's floor, boxes and planes are the terrain, WorldDescription.terrain)")
    if world:
        return
    if ground is not None and float(m.geom_pos[ground][2]) != 0.0 and touches_bodies(m, ground):
        height = float(m.geom_pos[ground][2])
        warn_located(f"the floor '{geom_label(reader, ground)}' is at z = {height:g} m: load_world's description has it "
                     "(WorldDescription.terrain, for Terrain.of); a world built without it has the plane z = 0",
                     _geom_where(reader, ground))
    _warn_geoms(reader, boxes, "{count} box(es) and plane(s) of the world body are static boxes of the terrain of load_world's description "
                               "(WorldDescription.terrain, for Terrain.of), which load_model leaves out: {names}")


def _warn_geoms(reader, geoms: list[int], template: str) -> None:
    """One warning at the first of ``geoms`` listing them (with their shapes) in ``template``."""
    if not geoms:
        return
    labels = [f"'{geom_label(reader, g)}' ({_SHAPE_NAMES.get(int(reader.m.geom_type[g]), 'unknown')})" for g in geoms]
    names = ", ".join(labels[:_LISTED]) + (f" and {len(labels) - _LISTED} more" if len(labels) > _LISTED else "")
    warn_located(template.format(count=len(geoms), names=names), _geom_where(reader, geoms[0]))


def _geom_where(reader, g: int) -> SourceLocation:
    name = reader.name("geom", g)
    if name:
        return reader.where("geom", name)
    return SourceLocation(file=reader.file, line=reader.lines.get(("geom", None)), element="<geom>")


def _warn_plugins(reader) -> None:
    """A warning for each plugin of the main file that acts on the bodies (not only through
    actuators or sensors), at its first element; one at ``<mujoco>`` for those of included files."""
    m, root = reader.m, reader.root
    if not m.nplugin:
        return
    elsewhere = {element.get("instance") for tag in ("actuator", "sensor") for section in root.iter(tag) for element in section.iter("plugin")}
    named: dict[str, int] = {}
    for element in root.iter("plugin"):
        name = element.get("plugin")
        if name is None or any(parent.tag in ("actuator", "sensor") for parent in element.iterancestors()):
            continue
        instances = {child.get("name") for child in element if child.tag == "instance"}
        if element.getparent().tag == "extension" and (not instances or instances <= elsewhere):
            continue  # a declaration whose instances are inline elsewhere, or used by actuators and sensors only
        named.setdefault(name, element.sourceline)
    for name, line in named.items():
        warn_located(f"MuJoCo plugin '{name}' is not represented: what it adds (passive forces, collision shapes) is left out",
                     SourceLocation(file=reader.file, line=line, element=f'<plugin plugin="{name}">'))
    declared = {element.get("plugin") for element in root.iter("plugin") if element.get("plugin")}
    if not declared:
        _warn_at_tag(reader, "mujoco", f"the model's {int(m.nplugin)} MuJoCo plugin instance(s) (from included files) are not represented: left out")


def _warn_at_tag(reader, tag: str, message: str) -> None:
    """A warning at the first ``<tag>`` of the main file (the ``<mujoco>`` root when it has none there)."""
    line = reader.lines.get((tag, None))
    element = f"<{tag}>" if line is not None else "<mujoco>"
    warn_located(message, SourceLocation(file=reader.file, line=line if line is not None else reader.lines.get(("mujoco", None)), element=element))
