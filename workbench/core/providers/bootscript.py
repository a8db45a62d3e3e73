"""User data that installs the instance-side guard (``resources/guard/``) on a cloud machine.

The cloud plugins put the output of :func:`render_guard_userdata` (a
``#cloud-config`` document) into the launch's user data (AWS) or custom data
(Azure).  Plugins that build their own cloud-config merge
:func:`guard_cloud_config`'s dict into theirs instead; plugins whose user data
is a shell script embed :func:`render_guard_shell`.

What gets installed (see ``resources/guard/README.md``): the guard script,
its config with this launch's limits, a systemd service + timer that run it
every minute and after every boot, and ``workbench-end-bill`` (linked into
each user's ``~/.workbench/bin``), which the remote runner's on_finish calls
to end the bill from the machine.  The guard learns that the job ended from
the runner's job folder, ``<base>/jobs/<launch id>/exit_code``
(:func:`job_dir_globs`), and respects its ``hold``, ``handled`` and
``keep_running`` files.

It is also the one place for what every cloud's boot script records about its launch
(:func:`launch_metadata`: ``/var/lib/workbench/launch.json`` with the launch id, owner,
provider, job, SSH user and limits; the ``started`` stamp; the console line; the runner's
folders), so a plugin only adds its own boot specifics (its user-data format and limit).

Pure functions (read two small files); safe on any thread.  Raises
ConfigError for an unknown cloud or an invalid launch id, SpecError for job text that
would break the script, PluginError when the bundled guard files are missing (a broken
install) or a boot script grows over its cloud's limit.
"""

from __future__ import annotations

import base64
import gzip
import json
import shlex
from pathlib import Path
from typing import Any, Mapping

import yaml

from workbench.core import paths
from workbench.core.domain.errors import ConfigError, PluginError, SpecError
from workbench.core.domain.models import JobSpec

CLOUDS = ("aws", "azure", "alibaba")
SCRIPT_PATH = "/opt/workbench/guard/workbench_guard.py"
CONFIG_PATH = "/etc/workbench/guard.json"
UNIT_DIR = "/etc/systemd/system"
UNITS = ("workbench-guard.service", "workbench-guard.timer")
#: AWS user data is limited to 16 KB before base64; stay well below it (the plugins add their own part)
MAX_USERDATA_BYTES = 16 * 1024


END_BILL_PATH = "/usr/local/bin/workbench-end-bill"
END_BILL_SH = f"""#!/bin/sh
# End this machine's bill now (terminate | stop): called by the job's on_finish on the machine.
exec /usr/bin/python3 {SCRIPT_PATH} --config {CONFIG_PATH} --end-bill "${{1:-terminate}}"
"""
#: links workbench-end-bill into every user's ~/.workbench/bin (runs after cloud-init created the users)
LINK_END_BILL = ('for h in /root /home/*; do [ -d "$h" ] || continue; u=$(stat -c %U "$h"); '
                 'mkdir -p "$h/.workbench/bin" && ln -sf ' + END_BILL_PATH + ' "$h/.workbench/bin/workbench-end-bill"'
                 ' && chown -h "$u" "$h/.workbench" "$h/.workbench/bin" "$h/.workbench/bin/workbench-end-bill"; done; '
                 'mkdir -p /opt/workbench/bin && ln -sf ' + END_BILL_PATH + ' /opt/workbench/bin/workbench-end-bill')


#: what every boot script records (see :func:`launch_metadata`) and the folders the remote runner uses
STATE_DIR = "/var/lib/workbench"
LAUNCH_JSON = f"{STATE_DIR}/launch.json"
STARTED_PATH = f"{STATE_DIR}/started"
RUNNER_DIR = "/opt/workbench"
JOBS_DIR = f"{RUNNER_DIR}/jobs"
#: writes the UTC time the machine first booted (sh)
STAMP_STARTED = f"date -u +%Y-%m-%dT%H:%M:%SZ > {STARTED_PATH}"


def launch_metadata(launch_id: str, owner: str, provider: str, spec: JobSpec, ssh_user: str,
                    **extra: Any) -> dict[str, Any]:
    """What the machine records about its launch (``launch.json``); no secret: these are tags anyway.

    ``extra`` adds a cloud's own keys (Azure: ``resource_group``).
    """
    meta: dict[str, Any] = {
        "launch_id": paths.check_launch_id(launch_id),
        "owner": owner,
        "provider": provider,
        "job": spec.name,
        "ssh_user": ssh_user,
        "max_runtime_minutes": spec.guards.max_runtime_minutes,
        "idle_minutes": spec.guards.idle_minutes,
    }
    meta.update(extra)
    return meta


def launch_json(launch_id: str, owner: str, provider: str, spec: JobSpec, ssh_user: str, **extra: Any) -> str:
    """:func:`launch_metadata` as the text of ``launch.json`` (stable key order)."""
    return json.dumps(launch_metadata(launch_id, owner, provider, spec, ssh_user, **extra), indent=1,
                      sort_keys=True)


def console_line(launch_id: str) -> str:
    """The line a boot script writes to the serial console (visible in the cloud's console output)."""
    return f"workbench: launch {paths.check_launch_id(launch_id)} started"


def heredoc(path: str, text: str, marker: str,
            hint: str | None = "rename the job (its name is written into the machine's boot script)") -> str:
    """``cat > path <<'MARKER'`` … ``MARKER`` (sh); SpecError (with ``hint``) if ``text`` contains the marker."""
    if marker in text:
        raise SpecError(f"the text written to {path} must not contain {marker!r}", hint=hint)
    body = text if text.endswith("\n") else text + "\n"
    return f"cat > {path} <<'{marker}'\n{body}{marker}"


def shell_boot_script(launch_id: str, meta_json: str, ssh_user: str, guard_shell: str, *, errexit: bool,
                      before_guard: str = "") -> str:
    """A shell boot script (AWS user data, Alibaba UserData): folders, ``launch.json``, the start stamp,
    the console line, ``before_guard`` (e.g. a driver install), then the instance-side guard's installer.

    ``errexit``: stop at the first failing line (``set -eu``) or carry on (``set -u``).
    SpecError when a text would break its here-document.
    """
    user = shlex.quote(ssh_user)
    return f"""#!/bin/bash
# cloud-gpu-workbench: prepare this machine for launch {launch_id}
set -{'e' if errexit else ''}u
umask 022
install -d -m 0755 {STATE_DIR} {RUNNER_DIR}
install -d -m 0755 -o {user} {JOBS_DIR} 2>/dev/null || install -d -m 0755 {JOBS_DIR}
{heredoc(LAUNCH_JSON, meta_json, "WORKBENCH_EOF")}
{STAMP_STARTED}
echo "{console_line(launch_id)} $(cat {STARTED_PATH})" > /dev/console 2>/dev/null || true
{before_guard}{heredoc(f"{STATE_DIR}/install-guard.sh", guard_shell, "WORKBENCH_GUARD_EOF", hint=None)}
sh {STATE_DIR}/install-guard.sh || echo "workbench: the instance guard could not be installed" > /dev/console 2>/dev/null || true
"""


CONTAINER_RUNTIME = r"""# a job in a container image: Docker and the NVIDIA container toolkit where the machine lacks them
( export DEBIAN_FRONTEND=noninteractive
  if ! command -v docker >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then apt-get update -q && apt-get install -y -q docker.io
    elif command -v dnf >/dev/null 2>&1; then dnf install -y -q docker; fi
    systemctl enable --now docker 2>/dev/null || service docker start
  fi
  if [ "@GPU@" = yes ] && ! command -v nvidia-ctk >/dev/null 2>&1; then
    N=https://nvidia.github.io/libnvidia-container
    if command -v apt-get >/dev/null 2>&1; then
      K=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg
      curl -fsSL "$N/gpgkey" | gpg --batch --yes --dearmor -o "$K"
      curl -fsSL "$N/stable/deb/nvidia-container-toolkit.list" | sed "s#deb https://#deb [signed-by=$K] https://#g" \
        > /etc/apt/sources.list.d/nvidia-container-toolkit.list
      apt-get update -q && apt-get install -y -q nvidia-container-toolkit
    elif command -v dnf >/dev/null 2>&1; then
      curl -fsSL "$N/stable/rpm/nvidia-container-toolkit.repo" > /etc/yum.repos.d/nvidia-container-toolkit.repo
      dnf install -y -q nvidia-container-toolkit
    fi
    nvidia-ctk runtime configure --runtime=docker && { systemctl restart docker 2>/dev/null || service docker restart; }
  fi
  usermod -aG docker @USER@ 2>/dev/null || true  # the job's SSH user runs docker without sudo
) > /var/log/workbench-container-runtime.log 2>&1 \
  || echo "workbench: Docker or the NVIDIA container toolkit could not be installed" \
          "(see /var/log/workbench-container-runtime.log)" \
     > /dev/console 2>/dev/null || true
"""


def container_runtime(spec: JobSpec, ssh_user: str) -> str:
    """The boot script's sh step for a job with ``image:`` (empty without one): Docker, and for a GPU job the
    NVIDIA container toolkit (``nvidia-ctk``) registered with Docker, each only where missing (a Deep Learning
    image has both); the SSH user joins the docker group.  A failure is reported, never fatal to the boot:
    the job's pull then says what is missing."""
    if spec.image is None:
        return ""
    gpu = "yes" if spec.resources.gpu is not None else "no"
    return CONTAINER_RUNTIME.replace("@GPU@", gpu).replace("@USER@", shlex.quote(ssh_user))


def check_size(text: str, limit: int, what: str) -> str:
    """``text`` unchanged; PluginError when its UTF-8 size is over ``limit`` bytes (a cloud's user-data limit)."""
    size = len(text.encode("utf-8"))
    if size > limit:
        raise PluginError(f"the {what} is {size} bytes, over the {limit}-byte limit")
    return text


def job_dir_globs(launch_id: str) -> list[str]:
    """Where the remote runner's job folder may be (``$WORKBENCH_REMOTE_DIR/jobs/<id>``: ``~/.workbench`` by
    default; the Azure plugin prepares ``/opt/workbench``)."""
    lid = paths.check_launch_id(launch_id)
    return [f"/root/.workbench/jobs/{lid}", f"/home/*/.workbench/jobs/{lid}", f"/opt/workbench/jobs/{lid}",
            f"/var/lib/workbench/jobs/{lid}"]


def _guard_dir() -> Path:
    return paths.resources_dir() / "guard"


def _read(name: str) -> str:
    path = _guard_dir() / name
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PluginError(f"the instance guard file {path} is missing: {exc.strerror or exc}",
                          hint="reinstall Cloud GPU Workbench; its resources folder is incomplete") from exc


def guard_config(spec: JobSpec, launch_id: str, cloud: str, *, not_after: float | None = None,
                 finish_grace_s: float = 600.0, azure: Mapping[str, Any] | None = None,
                 extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The guard's JSON config for this launch (``extra`` overrides any key, e.g. in tests)."""
    if cloud not in CLOUDS:
        raise ConfigError(f"the instance guard supports {', '.join(CLOUDS)}, not {cloud!r}")
    g = spec.guards
    lid = paths.check_launch_id(launch_id)
    cfg: dict[str, Any] = {
        "launch_id": lid,
        "cloud": cloud,
        "max_runtime_s": None if g.max_runtime_minutes is None else g.max_runtime_minutes * 60,
        "not_after": not_after,
        "idle_s": None if g.idle_minutes is None else g.idle_minutes * 60,
        "idle_below": g.idle_util_below,
        "on_finish": spec.on_finish.value,
        "finish_grace_s": finish_grace_s,
        "job_dirs": job_dir_globs(lid),
        "state_path": f"/var/lib/workbench/guard/{lid}.json",
        "console": "/dev/console",
    }
    if cloud == "azure":
        cfg["azure"] = dict(azure or {})
    cfg.update(extra or {})
    return cfg


def guard_files(spec: JobSpec, launch_id: str, cloud: str, **kwargs: Any) -> list[tuple[str, str, str]]:
    """(path on the machine, content, octal mode) of every file the guard needs."""
    cfg = guard_config(spec, launch_id, cloud, **kwargs)
    # the config holds limits and endpoints, no secret: readable, so the job's user can end its own bill
    files = [(SCRIPT_PATH, _read("workbench_guard.py"), "0755"),
             (CONFIG_PATH, json.dumps(cfg, indent=1, sort_keys=True) + "\n", "0644"),
             (END_BILL_PATH, END_BILL_SH, "0755")]
    files += [(f"{UNIT_DIR}/{u}", _read(u), "0644") for u in UNITS]
    return files


def _packed(text: str) -> str:
    return base64.b64encode(gzip.compress(text.encode("utf-8"), mtime=0)).decode("ascii")


def _commands() -> list[list[str]]:
    return [["mkdir", "-p", "/var/lib/workbench/guard"],
            ["sh", "-c", LINK_END_BILL],
            ["systemctl", "daemon-reload"],
            ["systemctl", "enable", "--now", "workbench-guard.timer"]]


def guard_cloud_config(spec: JobSpec, launch_id: str, cloud: str, **kwargs: Any) -> dict[str, Any]:
    """A cloud-config dict (``write_files`` + ``runcmd``) that installs and starts the guard."""
    write_files = []
    for path, content, mode in guard_files(spec, launch_id, cloud, **kwargs):
        entry: dict[str, Any] = {"path": path, "permissions": mode, "owner": "root:root"}
        if path == SCRIPT_PATH:  # the big one: compressed keeps user data far below AWS's 16 KB
            entry.update(encoding="gz+b64", content=_packed(content))
        else:
            entry["content"] = content
        write_files.append(entry)
    return {"write_files": write_files, "runcmd": _commands()}


def render_guard_userdata(spec: JobSpec, launch_id: str, cloud: str, **kwargs: Any) -> str:
    """``#cloud-config`` text that installs the guard (for AWS user data / Azure custom data).

    Keyword arguments: ``not_after`` (absolute POSIX deadline), ``finish_grace_s``,
    ``azure`` (``imds``/``arm``/``resource``/``subscription_id``/``resource_group``
    overrides), ``extra`` (any config key).
    """
    doc = guard_cloud_config(spec, launch_id, cloud, **kwargs)
    text = "#cloud-config\n" + yaml.safe_dump(doc, sort_keys=False, width=1_000_000)
    return check_size(text, MAX_USERDATA_BYTES, "guard's user data")  # a guard, not a bug report: refuse loudly


def render_guard_shell(spec: JobSpec, launch_id: str, cloud: str, **kwargs: Any) -> str:
    """The same installation as a POSIX sh fragment (for user data that is a shell script)."""
    lines = ["# Cloud GPU Workbench instance guard", "set -e"]
    for path, content, mode in guard_files(spec, launch_id, cloud, **kwargs):
        q = shlex.quote(path)
        lines.append(f"mkdir -p {shlex.quote(str(Path(path).parent))}")
        lines.append(f"printf '%s' {shlex.quote(_packed(content))} | base64 -d | gzip -dc > {q}")
        lines.append(f"chmod {mode} {q}")
    lines += [" ".join(shlex.quote(a) for a in cmd) for cmd in _commands()]
    return "\n".join(lines) + "\n"
