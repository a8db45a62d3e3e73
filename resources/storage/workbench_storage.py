#!/usr/bin/env python3
"""Cloud GPU Workbench storage agent: datasets in, checkpoints out, and the interruption notice.

Runs on the machine (a cloud VM, or this computer for a Local job) around the job's own commands:

``prepare`` (first thing of ``setup``)
    every ``copy`` mount: source -> machine folder; every ``sync`` mount of a resumed attempt
    (``WORKBENCH_RESUME=1``): bucket -> machine folder, so the job finds its last checkpoint.
``run -- CMD...`` (wraps ``run``)
    starts CMD, sends each ``sync`` mount's folder to its bucket every ``interval_s`` and once more
    when CMD ends (the exit code is CMD's; a failed last save of a job that succeeded exits 1).
    Meanwhile it polls the cloud's interruption notice: AWS instance metadata
    ``spot/instance-action`` (two minutes' warning), Azure Scheduled Events ``Preempt`` (30 s),
    Alibaba ``spot/termination-time``, or a notice file (Local rehearsal).  On a notice it
    writes ``interrupted`` in the job folder, stops the job (SIGTERM to its processes, SIGKILL
    after a grace that leaves time to save), runs the last sync, and waits for the machine to be
    taken (exiting 143 if it is not, so on_finish still ends the bill).  A job in a container image
    (``--container container.sh``, CMD its ``container.sh exec``) gets its signals inside the container.
``sync``
    one sync of every ``sync`` mount now.

Data moves with rclone (one tool for S3, S3-compatible endpoints such as OSS, and Azure Blob);
a missing rclone is installed with apt-get.  The config (``--config FILE``, JSON) names the
mounts and rclone remotes and holds no secret; the remotes' credentials (short-lived and
scoped to the mounts' buckets: never the user's own keys) come from ``credentials_file`` (0600;
the app writes it, on a cloud machine and on this computer alike) or ``RCLONE_CONFIG_WB<N>_*``
variables in the agent's environment, and go to rclone alone: the job's own processes never
see them.  With ``drop_credentials`` (this computer, whose job folder outlives the job) the
file is deleted when ``run`` ends, or when ``prepare`` fails (``run`` is not started then).

Python standard library only, Python >= 3.6 (like the guard).  Every line it prints starts
with ``[workbench]`` and goes to the job's log.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

DEFAULTS = {
    "launch_id": "?",
    "state_dir": ".",
    "work_dir": ".",
    "credentials_file": None,
    "drop_credentials": False,
    "rclone": "rclone",
    "rclone_flags": ["--transfers", "8", "--checkers", "16", "--retries", "3", "--low-level-retries", "10",
                     "--contimeout", "15s", "--timeout", "5m", "--stats", "0"],
    "install_rclone": True,
    "mounts": [],
    "notice": {"cloud": "none"},
    "term_grace_s": 90.0,
    "reclaim_wait_s": 600.0,
    "final_sync_tries": 3,
    "container": None,  # a job in a container image: its container.sh, through which signals reach the job
    "open_mounts": False,  # the same job: folders and restored files any container user may write (umask 0)
}
AWS_IMDS = "http://169.254.169.254"
ALIBABA_IMDS = "http://100.100.100.200"
SECRET_PREFIX = "RCLONE_CONFIG_WB"
EXIT_INTERRUPTED = 143


def now():
    return time.time()


def say(message):
    print("[workbench] %s %s" % (time.strftime("%H:%M:%S", time.localtime(now())), message))
    sys.stdout.flush()


def write_atomic(path, text):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def _iso(ts):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def _parse_time(text):
    """An ISO 8601 UTC time (AWS, Alibaba) or an RFC 1123 one (Azure) -> POSIX seconds; None if unreadable."""
    import calendar
    import email.utils
    text = (text or "").strip()
    for fmt in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ"):
        try:
            return float(calendar.timegm(time.strptime(text, fmt)))
        except ValueError:
            pass
    try:
        parsed = email.utils.parsedate_tz(text)
        return float(email.utils.mktime_tz(parsed)) if parsed else None
    except (TypeError, ValueError, OverflowError):
        return None


class Notice(object):
    """Asks the machine's metadata service (or a file) whether the machine is about to be taken."""

    def __init__(self, cfg):
        self.cfg = dict(cfg or {})
        self.cloud = self.cfg.get("cloud") or "none"
        self.timeout = float(self.cfg.get("timeout_s", 2.0))
        self._token = None
        self._token_at = 0.0

    def _get(self, url, headers, method="GET"):
        req = urllib.request.Request(url, headers=headers, method=method)
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:
            return resp.read().decode("utf-8", "replace")

    def check(self):
        """None, or {"reason", "source", "not_after"} when an interruption is announced."""
        try:
            found = self._file()
            if found is None and self.cloud == "aws":
                found = self._aws()
            elif found is None and self.cloud == "azure":
                found = self._azure()
            elif found is None and self.cloud == "alibaba":
                found = self._alibaba()
            return found
        except (OSError, ValueError, KeyError, TypeError):
            return None  # no metadata service (yet): no notice

    def _file(self):
        path = self.cfg.get("file")
        if not path or not os.path.exists(path):
            return None
        try:
            with open(path) as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            data = {}
        if not isinstance(data, dict):
            data = {}
        # a rehearsal: its "not_after" is the pretend reclaim itself, so nothing waits past it
        return {"reason": str(data.get("reason") or "preemption"),
                "source": str(data.get("source") or "interruption notice file"),
                "not_after": float(data.get("not_after") or now() + 30.0), "rehearsal": True}

    def _aws(self):
        base = (self.cfg.get("imds") or AWS_IMDS).rstrip("/")
        if self._token is None or now() - self._token_at > 3000:
            try:
                self._token = self._get(base + "/latest/api/token", {"X-aws-ec2-metadata-token-ttl-seconds": "3600"},
                                        method="PUT").strip()
                self._token_at = now()
            except urllib.error.HTTPError:
                self._token = ""  # IMDSv1 only
        headers = {"X-aws-ec2-metadata-token": self._token} if self._token else {}
        try:
            body = self._get(base + "/latest/meta-data/spot/instance-action", headers)
        except urllib.error.HTTPError as exc:
            if exc.code == 401:
                self._token = None
            return None  # 404: no interruption scheduled
        data = json.loads(body)
        action = str(data.get("action") or "terminate")
        return {"reason": "preemption", "source": "AWS spot instance-action (%s)" % action,
                "not_after": _parse_time(data.get("time")) or now() + 120.0}

    def _azure(self):
        base = (self.cfg.get("imds") or AWS_IMDS).rstrip("/")
        body = self._get(base + "/metadata/scheduledevents?api-version=2020-07-01", {"Metadata": "true"})
        for event in json.loads(body).get("Events") or []:
            if event.get("EventType") == "Preempt":
                return {"reason": "preemption", "source": "Azure Scheduled Events Preempt (%s)" % event.get("EventId", ""),
                        "not_after": _parse_time(event.get("NotBefore")) or now() + 30.0}
        return None

    def _alibaba(self):
        base = (self.cfg.get("imds") or ALIBABA_IMDS).rstrip("/")
        try:
            body = self._get(base + "/latest/meta-data/instance/spot/termination-time", {})
        except urllib.error.HTTPError:
            return None
        return {"reason": "preemption", "source": "Alibaba spot termination-time",
                "not_after": _parse_time(body) or now() + 300.0}


class Agent(object):
    def __init__(self, config):
        self.cfg = dict(DEFAULTS)
        self.cfg.update(config)
        self.state_dir = self.cfg["state_dir"]
        self.work_dir = self.cfg["work_dir"]
        self.mounts = [dict(m) for m in self.cfg["mounts"]]
        self._secrets_stamp = self._credentials_stamp()
        self.secrets = self._secrets()
        self.rclone = self.cfg["rclone"]
        self._sync_locks = {}
        self._threads = []
        self.child = None
        self.stop_reason = None  # "signal" or the notice
        if self.cfg.get("open_mounts"):
            os.umask(0)  # the container's user may not be ours; the files it writes stay readable (its umask)

    # -- plumbing -----------------------------------------------------------------
    def _secrets(self):
        found = {k: v for k, v in os.environ.items() if k.startswith(SECRET_PREFIX)}
        path = self.cfg.get("credentials_file")
        if path and os.path.exists(path):
            with open(path) as fh:
                found.update({str(k): str(v) for k, v in json.load(fh).items()})
        return found

    def _credentials_stamp(self):
        path = self.cfg.get("credentials_file")
        try:
            st = os.stat(path) if path else None
        except OSError:
            return None
        return None if st is None else (st.st_mtime_ns, st.st_size, st.st_ino)

    def renewed(self):
        """Read the credentials file again when it was replaced (the controller renews short-lived credentials of
        the attempts it relaunched: a role's sessions last an hour); True when it was."""
        stamp = self._credentials_stamp()
        if stamp is None or stamp == self._secrets_stamp:
            return False
        self._secrets_stamp = stamp
        self.secrets = self._secrets()
        say("storage credentials renewed")
        return True

    def rclone_env(self):
        # the machine's (or this computer's) own AWS settings must not redirect or re-sign our requests
        self.renewed()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "RCLONE_"))}
        env.update(self.secrets)
        return env

    def child_env(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith(SECRET_PREFIX)}
        env.setdefault("WORKBENCH_ATTEMPT", "1")
        env.setdefault("WORKBENCH_RESUME", "0")
        return env

    def drop_credentials(self):
        """Delete the credentials file when the config says so (read at start: the agent keeps its copy)."""
        path = self.cfg.get("credentials_file")
        if not (self.cfg.get("drop_credentials") and path):
            return
        try:
            os.remove(path)
        except OSError:
            pass  # already gone (another node of a rehearsal, or a second end)

    def path_of(self, mount):
        path = os.path.expanduser(mount["path"])
        return path if os.path.isabs(path) else os.path.join(self.work_dir, path)

    def marker(self, name):
        return os.path.join(self.state_dir, name)

    def ensure_rclone(self):
        if _which(self.rclone):
            return True
        if not self.cfg.get("install_rclone"):
            say("rclone is not installed and may not be installed here: storage mounts cannot work")
            return False
        say("installing rclone (apt-get)")
        sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for cmd in (sudo + ["apt-get", "install", "-y", "-q", "rclone"],
                    sudo + ["apt-get", "update", "-q"], sudo + ["apt-get", "install", "-y", "-q", "rclone"]):
            subprocess.call(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if _which(self.rclone):
                return True
        say("could not install rclone: storage mounts cannot work (install it in setup: apt-get install rclone)")
        return False

    def make_dir(self, path):
        try:
            os.makedirs(path, exist_ok=True)
        except PermissionError:
            subprocess.call(["sudo", "-n", "mkdir", "-p", path])
            subprocess.call(["sudo", "-n", "chown", "%d:%d" % (os.getuid(), os.getgid()), path])
            os.makedirs(path, exist_ok=True)
        if self.cfg.get("open_mounts"):
            try:
                mode = os.stat(path).st_mode & 0o7777  # made by sudo (its umask) or before: the container's user
                if mode & 0o777 != 0o777:  # writes here (sticky and other bits kept)
                    os.chmod(path, mode | 0o777)
            except OSError:
                pass  # not ours: as it is

    def transfer(self, src, dst, what):
        """rclone copy src dst; True on success (the reason printed otherwise)."""
        cmd = [self.rclone, "--config", os.devnull, "copy", src, dst] + list(self.cfg["rclone_flags"])
        started = now()
        try:
            res = subprocess.run(cmd, env=self.rclone_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 universal_newlines=True)
        except OSError as exc:
            say("%s failed: cannot run rclone: %s" % (what, exc))
            return False
        if res.returncode != 0:
            lines = [ln for ln in (res.stderr or "").splitlines() if ln.strip()]
            say("%s failed (rclone exit %d): %s" % (what, res.returncode, " | ".join(lines[-3:])[-600:]))
            return False
        say("%s done in %.1f s" % (what, now() - started))
        return True

    # -- prepare ---------------------------------------------------------------------
    def prepare(self):
        """Copy mounts in, restore sync mounts of a resumed attempt; 0 or 1 (the job must not start)."""
        if os.path.exists(self.marker("storage.prepared")):
            return 0
        resume = os.environ.get("WORKBENCH_RESUME") == "1"
        wanted = [m for m in self.mounts if m["mode"] == "copy" or resume]
        for m in self.mounts:
            self.make_dir(self.path_of(m))
        if wanted and not self.ensure_rclone():
            return 1
        for m in wanted:
            if m["mode"] == "copy":
                what = "copy %s -> %s" % (m["source"], m["path"])
            else:
                what = "resume: restore %s -> %s (attempt %s)" % (m["source"], m["path"],
                                                                   os.environ.get("WORKBENCH_ATTEMPT", "?"))
            say(what)
            if not self.transfer(m["remote"], self.path_of(m), what):
                return 1
        write_atomic(self.marker("storage.prepared"), "%s\n" % _iso(now()))
        return 0

    # -- sync ----------------------------------------------------------------------------
    def sync_one(self, m, why):
        lock = self._sync_locks.setdefault(m["path"], threading.Lock())
        with lock:
            path = self.path_of(m)
            if not os.path.isdir(path):
                return True
            return self.transfer(path, m["remote"], "%s: save %s -> %s" % (why, m["path"], m["source"]))

    def sync_all(self, why, tries=1):
        ok = True
        for m in self.mounts:
            if m["mode"] != "sync":
                continue
            for n in range(max(1, int(tries))):
                if self.sync_one(m, why if n == 0 else "%s (try %d)" % (why, n + 1)):
                    break
                time.sleep(min(5.0, 1.0 + n))
            else:
                ok = False
        return ok

    def _background_sync(self, m):
        lock = self._sync_locks.setdefault(m["path"], threading.Lock())
        if lock.locked():
            return  # the previous one is still running: skip this tick
        t = threading.Thread(target=self.sync_one, args=(m, "every %gs" % float(m["interval_s"])))
        t.daemon = True
        t.start()
        self._threads.append(t)

    # -- run ---------------------------------------------------------------------------------
    def run(self, cmd):
        if self.prepare() != 0:
            return 1
        syncs = [m for m in self.mounts if m["mode"] == "sync"]
        if syncs and not self.ensure_rclone():
            return 1
        notice = Notice(self.cfg.get("notice"))
        poll = float((self.cfg.get("notice") or {}).get("poll_s", 5.0))
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)
        # a job in a container: its docker exec client in a session of its own, so a TERM to our whole group (the
        # Local provider's Stop) leaves it to carry the job's last output and exit code (see stop_job)
        self.child = subprocess.Popen(cmd, env=self.child_env(), start_new_session=bool(self.cfg.get("container")))
        next_sync = dict((m["path"], now() + float(m["interval_s"])) for m in syncs)
        next_notice = 0.0
        found = None
        while True:
            code = self.child.poll()
            if code is not None:
                code = 128 - code if code < 0 else code  # killed by a signal: the shell's convention
                break
            t = now()
            if notice.cloud != "none" or notice.cfg.get("file"):
                if t >= next_notice:
                    next_notice = t + poll
                    found = notice.check()
                    if found:
                        return self.interrupted(found)
            for m in syncs:
                if t >= next_sync[m["path"]]:
                    next_sync[m["path"]] = t + float(m["interval_s"])
                    self._background_sync(m)
            time.sleep(min(0.25, poll))
        for t in self._threads:
            t.join()
        if syncs:
            ok = self.sync_all("job ended (exit %d)" % code, tries=self.cfg["final_sync_tries"])
            if not ok:
                say("the last save of the sync mounts FAILED: the bucket may not hold the job's latest files")
                if code == 0:
                    return 1
        return code

    def _on_signal(self, signum, _frame):
        if self.stop_reason is None:
            self.stop_reason = "signal"
            say("got signal %d: stopping the job, then saving the sync mounts" % signum)
        if self.child is not None:
            self.stop_job(signal.SIGTERM)

    def stop_job(self, sig):
        """``sig`` to the job: its process tree here, or (a container) every process inside its container —
        docker exec passes no signal on, and its client must live to carry the job's last output and exit code."""
        box = self.cfg.get("container")
        if box:
            subprocess.call(["sh", box, "signal", "KILL" if sig == signal.SIGKILL else "TERM"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if sig != signal.SIGKILL:
                return
        self.signal_tree(self.child.pid, sig)

    def signal_tree(self, root, sig):
        for pid in [root] + descendants(root):
            try:
                os.kill(pid, sig)
            except OSError:
                pass

    def interrupted(self, found):
        """The machine is about to be taken: stop the job, save, record it, wait to be reclaimed."""
        self.stop_reason = found
        noticed = now()
        not_after = float(found.get("not_after") or noticed + 120.0)
        record = {"reason": found["reason"], "source": found["source"], "noticed_at": noticed,
                  "not_after": not_after, "saved": False, "launch_id": self.cfg["launch_id"]}
        write_atomic(self.marker("interrupted"), json.dumps(record))
        write_atomic(self.marker("phase"), "interrupted\n")
        syncs = [m for m in self.mounts if m["mode"] == "sync"]
        say("interruption notice: %s, the machine goes at %s: stopping the job (SIGTERM)%s" % (
            found["source"], _iso(not_after), " and saving " + ", ".join(m["path"] for m in syncs) if syncs else ""))
        # leave time to save: the job gets the notice's time minus a reserve, within the grace
        grace = max(3.0, min(float(self.cfg["term_grace_s"]), not_after - noticed - 45.0))
        self.stop_job(signal.SIGTERM)
        deadline = now() + grace
        while self.child.poll() is None and now() < deadline:
            time.sleep(0.2)
        if self.child.poll() is None:
            say("the job did not stop within %.0f s: killing it" % grace)
            self.stop_job(signal.SIGKILL)
            self.child.wait()
        for t in self._threads:
            t.join()
        ok = self.sync_all("interrupted", tries=self.cfg["final_sync_tries"]) if syncs else True
        record.update(saved=ok, saved_at=now(), job_exit=self.child.returncode)
        write_atomic(self.marker("interrupted"), json.dumps(record))
        say("%s; waiting for the machine to be taken (the app resumes the job elsewhere)" % (
            "saved the sync mounts" if ok and syncs else "could NOT save the sync mounts" if syncs else "nothing to save"))
        wait_until = not_after + (0.0 if found.get("rehearsal") else float(self.cfg["reclaim_wait_s"]))
        while now() < wait_until:
            time.sleep(1.0)
        say("the machine was not taken after the notice: ending the job here (exit %d)" % EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED


def descendants(root):
    """Every process below ``root`` (from ps; /proc where ps is missing)."""
    parents = {}
    try:
        out = subprocess.run(["ps", "-A", "-o", "pid=", "-o", "ppid="], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, universal_newlines=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
                parents[int(parts[0])] = int(parts[1])
    except OSError:
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open("/proc/%s/stat" % name) as fh:
                        parents[int(name)] = int(fh.read().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    pass
    found, frontier = [], [root]
    while frontier:
        kids = [p for p, pp in parents.items() if pp in frontier and p not in found]
        found.extend(kids)
        frontier = kids
    return found


def _which(name):
    if os.path.sep in name:
        return os.access(name, os.X_OK)
    return any(os.access(os.path.join(d, name), os.X_OK) for d in os.environ.get("PATH", "").split(os.pathsep) if d)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    cmd = []
    if "--" in argv:
        cmd = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    if not argv or argv[0] not in ("prepare", "run", "sync") or "--config" not in argv:
        print("usage: workbench_storage.py prepare|run|sync --config FILE [--container SH] [-- CMD...]",
              file=sys.stderr)
        return 2
    path = argv[argv.index("--config") + 1]
    box = argv[argv.index("--container") + 1] if "--container" in argv else None
    try:
        with open(path) as fh:
            config = json.load(fh)
    except (OSError, ValueError) as exc:
        print("workbench_storage: cannot read config %s: %s" % (path, exc), file=sys.stderr)
        return 2
    agent = Agent(dict(config, container=box or config.get("container")))
    if argv[0] == "prepare":
        code = agent.prepare()
        if code != 0:
            agent.drop_credentials()  # the job stops here: run will not come to drop them
        return code
    if argv[0] == "sync":
        return 0 if agent.sync_all("on request") else 1
    if not cmd:
        print("workbench_storage: run needs a command after --", file=sys.stderr)
        return 2
    try:
        return agent.run(cmd)
    finally:
        agent.drop_credentials()


if __name__ == "__main__":
    sys.exit(main())
