"""Safe XML loading shared by every parser: no entity expansion, no DTD, no network."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from lxml import etree

from .description import SourceLocation
from .errors import ModelLoadError, warn

_MAX_BYTES = 64 * 1024 * 1024
XACRO_NAMESPACE = "http://www.ros.org/wiki/xacro"
_VERSION = re.compile(rb"""(<\?xml\s+version\s*=\s*)(["'])(?!1\.)[^"']*\2""")
XACRO_HINT = "expand it first, e.g. `xacro robot.urdf.xacro > robot.urdf` (ROS) or `pip install xacro`"


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )


@dataclass
class XmlSource:
    """A parsed document: its root element and the file it came from (None for a string)."""

    root: etree._Element
    file: str | None

    @property
    def directory(self) -> str:
        """The folder that relative paths in the document are resolved against."""
        return os.path.dirname(os.path.abspath(self.file)) if self.file else os.getcwd()


def looks_like_xml(source: str | os.PathLike) -> bool:
    """True when ``source`` is an XML string rather than a path."""
    return isinstance(source, str) and source.lstrip().startswith("<")


def _declaration_first(data: bytes) -> bytes:
    """``data`` with whitespace before the XML declaration moved after it (line numbers kept)."""
    body = data.lstrip()
    if len(body) == len(data) or not body.startswith(b"<?xml"):
        return data
    end = body.find(b"?>")
    if end < 0:
        return data
    return body[: end + 2] + data[: len(data) - len(body)] + body[end + 2 :]


def _version_one(data: bytes) -> bytes:
    """``data`` with an XML declaration version other than 1.x (``"0.0"`` in PyBullet's files) read as 1.0."""
    return _VERSION.sub(rb"\g<1>\g<2>1.0\g<2>", data, count=1) if data.startswith(b"<?xml") else data


def load_xml(source: str | os.PathLike | bytes) -> XmlSource:
    """Parse a path, an XML string or bytes into an :class:`XmlSource`.

    Whitespace before the XML declaration is accepted (as sdformat does), and a declaration of a
    version other than 1.x is read as 1.0 (as urdfdom and PyBullet do with ``version="0.0"``). Raises
    :class:`ModelLoadError` for a missing file, a ``.xacro`` file (to be expanded first),
    malformed XML, or any document type declaration with entities (XXE and billion-laughs
    payloads read nothing).
    """
    file = None
    if isinstance(source, bytes):
        data = source
    elif looks_like_xml(source):
        data = source.encode("utf-8")
    else:
        file = os.fspath(source)
        if file.lower().endswith(".xacro"):
            raise ModelLoadError(f"a xacro file is a template, not a URDF: {XACRO_HINT}", file=file)
        if not os.path.isfile(file):
            raise ModelLoadError("no such file", file=file)
        if os.path.getsize(file) > _MAX_BYTES:
            raise ModelLoadError(f"file larger than {_MAX_BYTES} bytes", file=file)
        with open(file, "rb") as handle:
            data = handle.read()
    try:
        root = etree.fromstring(_version_one(_declaration_first(data)), parser=_parser())
    except etree.XMLSyntaxError as error:
        line = error.lineno if error.lineno else None
        hint = f" (a xacro template: {XACRO_HINT})" if "prefix xacro" in error.msg else ""
        raise ModelLoadError(f"malformed XML: {error.msg}{hint}", file=file, line=line) from None
    if root is None:
        raise ModelLoadError("empty document", file=file)
    doctype = root.getroottree().docinfo
    if doctype.internalDTD is not None or doctype.system_url or doctype.public_id:
        raise ModelLoadError("document type declarations (DTD, entities) are not allowed", file=file, line=1)
    for element in root.iter():
        if isinstance(element, etree._Entity):
            raise ModelLoadError("XML entities are not allowed", file=file, line=element.sourceline)
    return XmlSource(root=root, file=file)


def describe(element: etree._Element) -> str:
    """A short tag for messages: ``<joint name="knee">`` (a namespaced tag with its prefix: ``<xacro:macro>``)."""
    tag = f"{element.prefix}:{etree.QName(element).localname}" if element.prefix else element.tag
    name = element.get("name")
    return f'<{tag} name="{name}">' if name is not None else f"<{tag}>"


def location(element: etree._Element, file: str | None) -> SourceLocation:
    """The :class:`SourceLocation` of ``element`` in ``file``."""
    return SourceLocation(file=file, line=element.sourceline, element=describe(element))


def error_at(element: etree._Element, file: str | None, message: str) -> ModelLoadError:
    """A :class:`ModelLoadError` located at ``element``."""
    return ModelLoadError(message, file=file, line=element.sourceline, element=describe(element))


def warn_at(element: etree._Element, file: str | None, message: str) -> None:
    """A :class:`~jaxsim_like.parsers.errors.ModelLoadWarning` located at ``element``."""
    warn(message, file=file, line=element.sourceline, element=describe(element))
