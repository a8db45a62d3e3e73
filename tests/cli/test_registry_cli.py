"""``workbench registry login|list|logout`` against the real Secret Service, and a spec's
``registry_auth.password: keyring`` refused before anything is launched when no login is saved (issue 34).

The container runs themselves (a Local job pulling with the saved password from a real registry) are in
tests/plugins/local/test_local_container_keyring.py."""

from __future__ import annotations

import json
import subprocess
import sys

from wbcli import ROOT, needs_secret_service

pytestmark = [needs_secret_service]

PASSWORD = "s3cret-registry-token-5a1d"
READ_BACK = """
import json, sys
from workbench.core.providers.credentials import CredentialStore
print(json.dumps(CredentialStore().get("@registry", sys.argv[1])))
"""


def _keyring_entry(wb, host: str) -> dict:
    done = subprocess.run([sys.executable, "-c", READ_BACK, host], env=wb.env, cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _no_file_holds(root, secret: str) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_login_saves_in_the_keyring_list_shows_no_password_and_logout_forgets(wb):
    host = "registry.example.com:5000"
    r = wb("registry", "login", "https://Registry.Example.com:5000/v2/", "--username", "bot", "--password-stdin",
           "--json", stdin=PASSWORD + "\n")
    assert r.rc == 0, r.err
    assert r.json["registry"] == host and r.json["username"] == "bot" and r.json["saved"] is True
    assert r.json["saved_at"].endswith("Z")
    assert PASSWORD not in r.out + r.err
    # the session's keyring holds it (one entry per registry), read back by a fresh process
    assert _keyring_entry(wb, host) == {"username": "bot", "password": PASSWORD}
    # Docker Hub's names are one registry
    hub = wb("registry", "login", "index.docker.io", "-u", "me", "--password-stdin", "--json", stdin="hub-token")
    assert hub.rc == 0 and hub.json["registry"] == "docker.io", hub.err

    listed = wb("registry", "list", "--json")
    assert listed.rc == 0, listed.err
    assert [(x["registry"], x["username"]) for x in listed.json["registries"]] == [("docker.io", "me"),
                                                                                  (host, "bot")]
    assert set(listed.json["registries"][0]) == {"registry", "username", "saved_at"}
    text = wb("registry", "list")
    assert "registry.example.com:5000" in text.out and "bot" in text.out and PASSWORD not in text.out
    _no_file_holds(wb.home, PASSWORD)  # in the keyring, nowhere on disk

    # a second login replaces the first (one per registry)
    again = wb("registry", "login", host, "-u", "robot", "--password-stdin", "--json", stdin="newer-token")
    assert again.rc == 0 and again.json["username"] == "robot"
    assert _keyring_entry(wb, host) == {"username": "robot", "password": "newer-token"}

    out = wb("registry", "logout", host, "--json")
    assert out.rc == 0 and out.json == {"registry": host, "deleted": True}, out.err
    assert _keyring_entry(wb, host) == {}
    assert [x["registry"] for x in wb("registry", "list", "--json").json["registries"]] == ["docker.io"]
    gone = wb("registry", "logout", host, "--json")
    assert gone.rc == 0 and gone.json == {"registry": host, "deleted": False}
    assert wb("registry", "logout", "docker.io", "--json").json["deleted"] is True


def test_login_refuses_a_bad_host_and_a_password_it_cannot_ask_for(wb):
    bad = wb("registry", "login", "not a host", "-u", "bot", "--password-stdin", "--json", stdin=PASSWORD)
    assert bad.rc == 1 and bad.json["error"]["kind"] == "config"
    assert "is not a registry host" in bad.json["error"]["message"]
    # no terminal, no --password-stdin: nothing to read it from (never the command line)
    none = wb("registry", "login", "ghcr.io", "-u", "bot", "--json")
    assert none.rc == 1 and none.json["error"]["kind"] == "config"
    assert "--password-stdin" in none.json["error"]["hint"]
    empty = wb("registry", "login", "ghcr.io", "-u", "bot", "--password-stdin", "--json", stdin="\n")
    assert empty.rc == 1 and "no password" in empty.json["error"]["message"]
    assert wb("registry", "list", "--json").json == {"registries": []}


def _keyring_spec(wb, image: str, user: str = "wbtest"):
    return wb.spec("keyring-login", "echo ran > ran.txt",
                   f"image:\n  name: {image}\n  registry_auth: {{username: {user}, password: keyring}}\n")


def test_a_spec_taking_its_password_from_the_keyring_is_refused_before_launch_without_a_saved_login(wb):
    spec = _keyring_spec(wb, "registry.example.com:5000/team/train:1")
    r = wb("launch", str(spec), "--provider", "local", "--yes", "--json")
    assert r.rc == 1, r.out + r.err
    error = r.json["error"]
    assert error["kind"] == "config"
    assert "no password is saved for the registry registry.example.com:5000" in error["message"]
    assert error["hint"] == "save it first: workbench registry login registry.example.com:5000 --username wbtest"
    assert wb("status", "--json").json["launches"] == []  # nothing was launched, nothing recorded

    # a login saved for another user is not taken for this one
    saved = wb("registry", "login", "registry.example.com:5000", "-u", "someone-else", "--password-stdin",
               stdin=PASSWORD)
    assert saved.rc == 0, saved.err
    other = wb("launch", str(spec), "--provider", "local", "--yes", "--json")
    assert other.rc == 1 and other.json["error"]["kind"] == "config"
    assert "'someone-else''s" in other.json["error"]["message"] and "'wbtest'" in other.json["error"]["message"]
    assert "--username wbtest" in other.json["error"]["hint"]
    assert PASSWORD not in other.out + other.err
    assert wb("status", "--json").json["launches"] == []


def test_convert_keeps_password_keyring_and_asks_for_no_secret(wb):
    spec = _keyring_spec(wb, "nvcr.io/nvidia/pytorch:24.05-py3")
    r = wb("convert", str(spec), "--json")
    assert r.rc == 0, r.err
    assert r.json["spec"]["image"]["registry_auth"] == {"username": "wbtest", "password": "keyring"}
    assert r.json["spec"]["secrets"] == []
    assert "password: keyring" in r.json["yaml"]
