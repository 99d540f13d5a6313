"""MJCF actuators of a compiled ``MjModel`` as :class:`ActuatorDescription` (numpy only).

MuJoCo's actuator force is ``gain u + b0 + b1 length + b2 velocity`` with ``length = gear q`` for a
joint transmission. A fixed gain and no or affine bias on a hinge or slide joint, without
activation dynamics, is one of three kinds: ``motor`` (no bias), ``position`` (``b1 = -gain``:
``kp = gain``, ``kv = -b2``) and ``velocity`` (``b1 = 0``, ``b2 = -gain``: ``kv = gain``); what
``position`` and ``velocity`` elements and ``general`` ones of these forms compile to. On a ball
joint (MuJoCo's ``mj_transmission``) the gear's first three numbers are an axis ``g`` in the
joint (child) frame: ``length = g . log(Q)``, velocity ``g . omega``, joint torques ``g f``; a
motor takes any axis, a position or velocity actuator an axis along one of the joint's (so that
it is one degree of freedom's controller), and a position actuator with ``kv`` no force range
(its damping ``-kv g . omega`` acts beside the controller, outside its clip). A ``motor`` on a
tendon (``length = gear L``; fixed or spatial) is read too. Any other actuator (position and
velocity ones on tendons, those on a ball joint named above, forces in the parent frame
(``jointinparent``), site transmissions, filters, muscles, plugins such as ``mujoco.pid``) is dropped with one located warning.
"""

from __future__ import annotations

import numpy as np

from .description import ActuatorDescription, SourceLocation
from .errors import warn

_JOINT_TRANSMISSION, _TENDON_TRANSMISSION, _GAIN_FIXED, _NO_DYNAMICS = 0, 3, 0, 0
_BIAS_NONE, _BIAS_AFFINE = 0, 1
_BALL, _HINGE_OR_SLIDE = 1, (2, 3)


def _kind(gain: float, bias: np.ndarray) -> str | None:
    b0, b1, b2 = (float(value) for value in bias[:3])
    if b0 != 0.0:
        return None
    if b1 == 0.0 and b2 == 0.0:
        return "motor"
    if b1 == -gain:
        return "position"
    if b1 == 0.0 and b2 == -gain:
        return "velocity"
    return None


def _range(limited, values) -> tuple[float, float]:
    return (float(values[0]), float(values[1])) if limited else (-np.inf, np.inf)


_TAGS = ("motor", "position", "velocity", "general", "intvelocity", "damper", "cylinder", "muscle", "adhesion", "plugin")


def _where(reader, a: int) -> SourceLocation:
    """The location of actuator ``a``: its element in the main file, by name or by order."""
    name = reader.name("actuator", a)
    tag = next((tag for tag in _TAGS if (tag, name) in reader.lines), None) if name else None
    if tag is not None:
        return SourceLocation(file=reader.file, line=reader.lines[(tag, name)], element=f'<{tag} name="{name}">')
    if reader.actuator_elements is not None:
        tag, line = reader.actuator_elements[a]
        return SourceLocation(file=reader.file, line=line, element=f'<{tag} name="{name}">' if name else f"<{tag}>")
    return SourceLocation(file=reader.file, element=f'<actuator name="{name or f"actuator{a}"}">')


def _read(reader, a: int) -> ActuatorDescription | None:
    """Actuator ``a`` of ``reader``'s model (``mjcf._Reader``), or None when not represented."""
    m = reader.m
    target, gain = int(m.actuator_trnid[a][0]), float(m.actuator_gainprm[a][0])
    simple = (
        m.actuator_dyntype[a] == _NO_DYNAMICS
        and m.actuator_gaintype[a] == _GAIN_FIXED
        and m.actuator_biastype[a] in (_BIAS_NONE, _BIAS_AFFINE)
        and m.actuator_plugin[a] < 0
    )
    kind = _kind(gain, m.actuator_biasprm[a]) if simple else None
    on_joint = m.actuator_trntype[a] == _JOINT_TRANSMISSION and m.jnt_type[target] in (_BALL, *_HINGE_OR_SLIDE)
    on_tendon = m.actuator_trntype[a] == _TENDON_TRANSMISSION and kind == "motor"
    if kind is None or not (on_joint or on_tendon):
        return None
    gear_axis = None
    if on_joint and m.jnt_type[target] == _BALL:
        gear_axis = tuple(float(value) for value in m.actuator_gear[a][:3])
        oblique = kind != "motor" and np.count_nonzero(gear_axis) != 1
        if oblique or (kind == "position" and m.actuator_biasprm[a][2] != 0.0 and m.actuator_forcelimited[a]):
            return None
    name = reader.name("actuator", a) or f"actuator{a}"
    return ActuatorDescription(
        name=name,
        joint=reader.joint(target) if on_joint else "",
        tendon=reader.tendon(target) if on_tendon else "",
        kind=kind,
        gear=1.0 if gear_axis is not None else float(m.actuator_gear[a][0]),
        gear_axis=gear_axis,
        gain=gain if kind == "motor" else 1.0,
        kp=gain if kind == "position" else 0.0,
        kv={"position": -float(m.actuator_biasprm[a][2]), "velocity": gain}.get(kind, 0.0),
        ctrl_range=_range(m.actuator_ctrllimited[a], m.actuator_ctrlrange[a]),
        force_range=_range(m.actuator_forcelimited[a], m.actuator_forcerange[a]),
        location=_where(reader, a),
    )


def warn_unrepresented(reader) -> None:
    """One located warning listing the actuators of ``reader``'s model that are dropped."""
    dropped = [a for a in range(reader.m.nu) if _read(reader, a) is None]
    if dropped:
        where = _where(reader, dropped[0])
        names = ", ".join(f"'{reader.name('actuator', a)}'" if reader.name("actuator", a) else f"#{a}" for a in dropped)
        warn(
            f"{len(dropped)} actuator(s) of a kind not represented (only motor, position and velocity actuators on a "
            f"hinge, slide or ball joint (on a ball about one of its axes but motors, and position ones with kv without a force range), and motors on a tendon, are) are dropped: {names}",
            file=where.file,
            line=where.line,
            element=where.element,
        )


def read_actuators(reader, joints: set[str], tendons: set[str]) -> list[ActuatorDescription]:
    """The represented actuators of ``reader``'s model on the named ``joints`` and ``tendons``, in
    MuJoCo's order."""
    actuators = (_read(reader, a) for a in range(reader.m.nu))
    return [a for a in actuators if a is not None and (a.joint in joints if a.joint else a.tendon in tendons)]
