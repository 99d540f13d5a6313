"""Hostile XML: external entities, entity expansion bombs and network DTDs are refused."""

from __future__ import annotations

import http.server
import pathlib
import threading
import time

import pytest

from jaxsim_like.parsers import ModelLoadError, parse_model, parse_urdf

SECRET = "top-secret-4f1c9a"


@pytest.fixture
def secret_file(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET)
    return path


def xxe_payloads(secret: pathlib.Path) -> list[str]:
    uri = secret.as_uri()
    return [
        f'<!DOCTYPE robot [<!ENTITY xxe SYSTEM "{uri}">]><robot name="&xxe;"><link name="base"/></robot>',
        f'<!DOCTYPE robot [<!ENTITY xxe SYSTEM "{uri}">]>'
        '<robot name="r"><link name="base"><inertial><mass value="1"/>'
        '<inertia ixx="&xxe;" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link></robot>',
        f'<!DOCTYPE robot [<!ENTITY xxe SYSTEM "{uri}">]><robot name="r"><link name="base">&xxe;</link></robot>',
        f'<!DOCTYPE robot [<!ENTITY % ext SYSTEM "{uri}"> %ext;]><robot name="r"><link name="base"/></robot>',
    ]


@pytest.mark.parametrize("index", range(4))
def test_external_entities_read_nothing(secret_file: pathlib.Path, tmp_path: pathlib.Path, index: int):
    payload = xxe_payloads(secret_file)[index]
    with pytest.raises(ModelLoadError) as from_string:
        parse_model(payload)
    path = tmp_path / "xxe.urdf"
    path.write_text(payload)
    with pytest.raises(ModelLoadError) as from_file:
        parse_urdf(path)
    for error in (from_string.value, from_file.value):
        assert SECRET not in str(error)
        assert SECRET not in repr(error.args)
    assert from_file.value.file == str(path) and from_file.value.line is not None


def test_billion_laughs_fails_fast():
    entities = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{level} "{("&lol" + str(level - 1) + ";") * 10}">' for level in range(1, 10)
    ]
    payload = "<!DOCTYPE robot [" + "".join(entities) + ']><robot name="&lol9;"><link name="base"/></robot>'
    start = time.perf_counter()
    with pytest.raises(ModelLoadError):
        parse_model(payload)
    assert time.perf_counter() - start < 1.0


class _CountingHandler(http.server.BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        type(self).requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/xml-dtd")
        self.end_headers()
        self.wfile.write(b'<!ENTITY remote "fetched">')

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def dtd_server():
    _CountingHandler.requests = []
    server = http.server.HTTPServer(("127.0.0.1", 0), _CountingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def test_network_dtd_is_not_fetched(dtd_server: str):
    payloads = [
        f'<!DOCTYPE robot SYSTEM "{dtd_server}/robot.dtd"><robot name="&remote;"><link name="base"/></robot>',
        f'<!DOCTYPE robot PUBLIC "-//X//DTD Robot//EN" "{dtd_server}/public.dtd"><robot name="r"><link name="base"/></robot>',
        f'<!DOCTYPE robot [<!ENTITY % remote SYSTEM "{dtd_server}/param.dtd"> %remote;]><robot name="r"><link name="base"/></robot>',
    ]
    for payload in payloads:
        with pytest.raises(ModelLoadError):
            parse_model(payload)
    assert _CountingHandler.requests == []


def test_local_external_dtd_is_not_loaded(tmp_path: pathlib.Path):
    dtd = tmp_path / "robot.dtd"
    dtd.write_text(f'<!ENTITY leak "{SECRET}">')
    payload = f'<!DOCTYPE robot SYSTEM "{dtd.as_uri()}"><robot name="&leak;"><link name="base"/></robot>'
    with pytest.raises(ModelLoadError) as error:
        parse_model(payload)
    assert SECRET not in str(error.value)
