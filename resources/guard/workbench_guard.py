#!/usr/bin/env python3
"""Cloud GPU Workbench guard: the dead-man switch that runs on the rented machine itself.

The app may be closed or the laptop asleep; this guard still ends the bill.
A systemd timer runs it once a minute (and after every boot).  Each run is one
check: it reads its config, its saved state and the GPUs, decides, saves its
state and exits, so it survives reboots and needs no daemon.

It fires when
  * max runtime: ``max_runtime_s`` passed since the guard first ran on this
    machine (kept across reboots), or the absolute ``not_after`` time passed;
  * idle GPU: every GPU read below ``idle_below`` % in every check for
    ``idle_s`` seconds (no GPU reading at all is never "idle");
  * job finished: the remote runner (``workbench.core.remote``) wrote
    ``exit_code`` in the job folder (``<base>/jobs/<launch id>/``, found through
    the ``job_dirs`` globs) and ``finish_grace_s`` passed, and any ``hold`` time
    in that folder passed, and neither ``handled`` (the app took over) nor
    ``keep_running`` (the user keeps it) exists there.  This is the backstop for
    the runner's own on_finish (which does not survive a reboot); only
    ``on_finish: terminate`` is enforced here.

A multi-node launch (``cluster/peers`` and ``rank`` in the job folder) is guarded as one: only
the head acts on a finished job, idle means every node idle (peers' states read over the launch's
SSH; silent is not idle), and ending the bill ends every node (AWS, Azure stop: each peer's guard).

``--end-bill terminate|stop`` ends the bill at once (the runner's on_finish
calls it through ``workbench-end-bill``): terminate as below; stop deallocates
the VM on Azure and is left to the app on AWS (a shutdown there terminates).

Firing on AWS runs ``shutdown -h now`` (the instance is launched with
InstanceInitiatedShutdownBehavior=terminate, so that ends the bill).  On
Alibaba Cloud a shutdown stops the instance (in economical mode its compute no
longer bills; its disks do) and the instance's AutoReleaseTime, set at launch
to the max runtime plus a margin, releases it; ``--end-bill stop`` is a
shutdown there too.  On Azure
it gets a token for the VM's managed identity from IMDS and DELETEs its own
resource group through ARM (an OS shutdown would not stop an Azure bill); a
failed delete is retried by the next run.  Every decision is logged to stdout
(the journal) and to the console (serial output).

Python standard library only, Python >= 3.6 (the oldest images the clouds still
offer).  ``WORKBENCH_GUARD_NOW`` overrides the clock (tests).  Secrets (the
token) are never written anywhere.
"""

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

DEFAULTS = {
    "cloud": "aws",
    "max_runtime_s": None,
    "not_after": None,
    "idle_s": None,
    "idle_below": 5.0,
    "on_finish": "terminate",
    "finish_grace_s": 600,
    "job_dirs": [],
    "state_path": "/var/lib/workbench/guard/state.json",
    "console": "/dev/console",
    "nvidia_smi": "nvidia-smi",
    "gpu_reads": 3,
    "gpu_read_interval_s": 1.0,
    "shutdown": ["shutdown", "-h", "now"],
    "azure": {},
}
AZURE_DEFAULTS = {
    "imds": "http://169.254.169.254",
    "arm": "https://management.azure.com",
    "resource": "https://management.azure.com/",
    "subscription_id": None,
    "resource_group": None,
    "api_version": "2025-04-01",
    "compute_api_version": "2026-04-01",
    "vm_name": None,
    "timeout_s": 20,
}


def now():
    forced = os.environ.get("WORKBENCH_GUARD_NOW")
    return float(forced) if forced else time.time()


class Guard(object):
    def __init__(self, config):
        self.cfg = dict(DEFAULTS)
        self.cfg.update(config)
        self.az = dict(AZURE_DEFAULTS)
        self.az.update(self.cfg.get("azure") or {})
        self.lid = str(self.cfg.get("launch_id") or "?")
        self.state = self._load_state()

    # -- logging -------------------------------------------------------------------
    def log(self, message, console=True):
        line = "workbench-guard[%s] %s: %s" % (
            self.lid, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now())), message)
        print(line)
        sys.stdout.flush()
        path = self.cfg.get("console")
        if console and path:
            try:
                with open(path, "a") as fh:
                    fh.write(line + "\n")
            except OSError:
                pass  # no console here: the journal still has it

    # -- state -----------------------------------------------------------------------
    def _load_state(self):
        try:
            with open(self.cfg["state_path"]) as fh:
                data = json.load(fh)
                return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def save_state(self):
        path = self.cfg["state_path"]
        folder = os.path.dirname(path)
        if folder and not os.path.isdir(folder):
            os.makedirs(folder, 0o700)
        tmp = path + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(self.state, fh)
        os.rename(tmp, path)

    # -- GPU readings -------------------------------------------------------------------
    def gpu_utils(self):
        """Highest utilisation per GPU over a few reads; None when nvidia-smi gives no reading."""
        reads = max(1, int(self.cfg["gpu_reads"]))
        best = None
        for n in range(reads):
            if n:
                time.sleep(float(self.cfg["gpu_read_interval_s"]))
            try:
                out = subprocess.run(
                    [self.cfg["nvidia_smi"], "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30, check=True,
                    universal_newlines=True).stdout
                values = [float(x.strip()) for x in out.splitlines() if x.strip()]
            except (OSError, subprocess.SubprocessError, ValueError):
                return None
            if not values:
                return None
            best = values if best is None else [max(a, b) for a, b in zip(best, values)]
        return best

    # -- a multi-node launch: act on every node -------------------------------------------
    def cluster(self):
        """(rank, peer addresses, cluster folder), or None for a single machine."""
        import glob
        for pattern in self.cfg["job_dirs"] or []:
            for path in sorted(glob.glob(pattern)):
                c = os.path.join(path, "cluster")
                try:
                    peers = open(os.path.join(c, "peers")).read().split()
                    return int(open(os.path.join(c, "rank")).read()), peers, c
                except (OSError, ValueError):
                    pass
        return None

    def on_peers(self, command):
        """Run ``command`` on every other node over the launch's SSH: [(rank, address, rc, output)]."""
        found = self.cluster() or (0, [], "")
        out = []
        for r, a in enumerate(found[1]):
            if r != found[0]:
                try:
                    p = subprocess.run(["ssh", "-F", found[2] + "/ssh_config", "-o", "ConnectTimeout=10", a, command],
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       timeout=60, universal_newlines=True)
                    out.append((r, a, p.returncode, p.stdout))
                except (OSError, subprocess.SubprocessError) as exc:
                    out.append((r, a, 255, str(exc)))
        return out

    def peers_idle(self, t, limit):
        path = self.cfg["state_path"]
        for r, a, rc, text in self.on_peers("sudo -n cat %s || cat %s" % (path, path)):
            try:
                peer = json.loads(text) if rc == 0 else {}
            except ValueError:
                peer = {}
            if peer.get("gpu_state") != "idle" or t < float(peer.get("idle_since") or t) + float(limit):
                self.log("idle here, but node %d (%s) is %s: the launch is not idle"
                         % (r, a, peer.get("gpu_state") or "not answering"))
                return False
        return True

    # -- checks ---------------------------------------------------------------------------
    def check(self):
        """One run: returns the reason to fire, or None."""
        t = now()
        st = self.state
        if "first_seen" not in st:
            st["first_seen"] = t
            self.log("armed: max runtime %s, idle %s below %s %%, on_finish %s" % (
                _fmt(self.cfg["max_runtime_s"]), _fmt(self.cfg["idle_s"]), self.cfg["idle_below"],
                self.cfg["on_finish"]))
        if st.get("fired"):
            return st["fired"]["reason"]
        limit = self.cfg["max_runtime_s"]
        if limit is not None and t >= st["first_seen"] + float(limit):
            return "max runtime of %s reached (up since %s)" % (_fmt(limit), _iso(st["first_seen"]))
        not_after = self.cfg["not_after"]
        if not_after is not None and t >= float(not_after):
            return "the launch's deadline %s passed" % _iso(float(not_after))
        found = self.cluster()
        if found is None or found[0] == 0:  # a worker's early end is not the job's end
            reason = self.check_finished(t)
            if reason:
                return reason
        return self.check_idle(t)

    def job_dir(self):
        """The job folder holding ``exit_code`` (first match of the ``job_dirs`` globs), or None."""
        import glob
        for pattern in self.cfg["job_dirs"] or []:
            for path in sorted(glob.glob(pattern)):
                if os.path.exists(os.path.join(path, "exit_code")):
                    return path
        return None

    def check_finished(self, t):
        folder = self.job_dir()
        if folder is None:
            return None
        st = self.state
        try:
            with open(os.path.join(folder, "exit_code")) as fh:
                code = fh.read().strip() or "?"
        except OSError:
            code = "?"
        if "finished_seen" not in st:
            st["finished_seen"] = t
            self.log("job finished with exit code %s (%s)" % (code, folder))
        if self.cfg["on_finish"] != "terminate":
            if not st.get("finish_left_to_app"):
                st["finish_left_to_app"] = True
                self.log("on_finish is %s: left to the app; max runtime still applies" % self.cfg["on_finish"])
            return None
        for name, why in (("handled", "the app took over"), ("keep_running", "keep running was requested")):
            if os.path.exists(os.path.join(folder, name)):
                if st.get("finish_stood_down") != name:
                    st["finish_stood_down"] = name
                    self.log("%s: not ending the machine for the finished job; max runtime still applies" % why)
                return None
        try:
            with open(os.path.join(folder, "hold")) as fh:
                hold = float(fh.read().strip() or 0)
        except (OSError, ValueError):
            hold = 0.0
        grace = float(self.cfg["finish_grace_s"])
        if t >= st["finished_seen"] + grace and t >= hold:
            return "job finished (exit code %s) and the %s grace period passed" % (code, _fmt(grace))
        return None

    def check_idle(self, t):
        limit = self.cfg["idle_s"]
        if limit is None:
            return None
        st = self.state
        utils = self.gpu_utils()
        below = float(self.cfg["idle_below"])
        if utils is None:
            if st.get("gpu_state") != "unknown":
                self.log("no GPU reading from nvidia-smi: the idle check waits (max runtime still applies)")
            st["gpu_state"] = "unknown"
            st.pop("idle_since", None)
            return None
        if max(utils) >= below:
            if st.get("gpu_state") != "busy":
                self.log("GPUs busy (highest %s %%)" % _num(max(utils)), console=st.get("gpu_state") == "idle")
            st["gpu_state"] = "busy"
            st.pop("idle_since", None)
            return None
        if "idle_since" not in st:
            st["idle_since"] = t
            self.log("GPUs idle (highest %s %% < %s %%): ending the machine after %s unless they get busy"
                     % (_num(max(utils)), _num(below), _fmt(limit)))
        st["gpu_state"] = "idle"
        if t >= st["idle_since"] + float(limit):
            self.save_state()  # the peers read this node's idle state too
            if not self.peers_idle(t, limit):
                return None
            return "every GPU below %s %% since %s (%s)" % (_num(below), _iso(st["idle_since"]), _fmt(limit))
        return None

    # -- firing ------------------------------------------------------------------------------
    def fire(self, reason):
        st = self.state
        first = not st.get("fired")
        if first:
            st["fired"] = {"reason": reason, "at": now(), "attempts": 0}
        st["fired"]["attempts"] += 1
        cloud = self.cfg["cloud"]
        self.log("DECISION: %s -> %s (attempt %d)" % (
            reason, "delete resource group" if cloud == "azure" else "shutdown", st["fired"]["attempts"]))
        self.save_state()  # before acting: the machine may be gone the next moment
        ok = self.end_bill("terminate")
        st["fired"]["done"] = bool(ok)
        self.save_state()
        return ok

    def end_bill(self, action, only_here=False):
        """terminate: AWS shutdown (terminates), Azure delete own resource group; stop: Azure deallocate.

        A node of a multi-node launch ends the other nodes first (unless ``only_here``: a peer asked).
        """
        cloud = self.cfg["cloud"]
        if not only_here and ((cloud == "aws" and action == "terminate") or (cloud == "azure" and action == "stop")):
            cmd = "sudo -n %s %s --config %s --end-bill %s --only-here" % (
                sys.executable, os.path.abspath(__file__), self.cfg.get("_config_path"), action)
            for r, a, rc, text in self.on_peers(cmd):
                self.log("asked node %d (%s) to end its bill: %s" % (r, a, "ok" if rc == 0 else text[-200:]))
        if action == "stop":
            if cloud == "azure":
                return self.deallocate_vm()
            if cloud == "alibaba":
                return self.shutdown()
            self.log("on_finish stop: a shutdown would terminate this AWS machine; leaving the stop to the app")
            return False
        if cloud == "azure":
            return self.delete_resource_group()
        return self.shutdown()

    def shutdown(self):
        cmd = list(self.cfg["shutdown"])
        if hasattr(os, "geteuid") and os.geteuid() != 0:
            cmd = ["sudo", "-n"] + cmd
        try:
            subprocess.run(cmd, timeout=60, check=True)
        except (OSError, subprocess.SubprocessError) as exc:
            self.log("shutdown failed: %s" % exc)
            return False
        self.log("shutdown requested")
        return True

    def _request(self, method, url, headers):
        req = urllib.request.Request(url, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=float(self.az["timeout_s"])) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def _azure_target(self):
        """(token, subscription, resource group, vm name) from IMDS; the token is never logged."""
        imds = self.az["imds"].rstrip("/")
        status, body = self._request("GET", "%s/metadata/identity/oauth2/token?%s" % (imds, urllib.parse.urlencode(
            {"api-version": "2018-02-01", "resource": self.az["resource"]})), {"Metadata": "true"})
        if status != 200:
            raise RuntimeError("no managed-identity token from IMDS (HTTP %d)" % status)
        token = json.loads(body.decode("utf-8"))["access_token"]
        sub, group, vm = self.az["subscription_id"], self.az["resource_group"], self.az["vm_name"]
        if not sub or not group or not vm:
            status, body = self._request("GET", "%s/metadata/instance?api-version=2021-02-01" % imds,
                                         {"Metadata": "true"})
            if status != 200:
                raise RuntimeError("no instance metadata from IMDS (HTTP %d)" % status)
            compute = json.loads(body.decode("utf-8"))["compute"]
            sub = sub or compute["subscriptionId"]
            group = group or compute["resourceGroupName"]
            vm = vm or compute["name"]
        return token, sub, group, vm

    def _arm(self, method, path, api_version, what):
        try:
            token, sub, group, vm = self._azure_target()
            url = "%s/subscriptions/%s/resourcegroups/%s%s?api-version=%s" % (
                self.az["arm"].rstrip("/"), urllib.parse.quote(sub), urllib.parse.quote(group),
                path.replace("{vm}", urllib.parse.quote(vm)), api_version)
            status, body = self._request(method, url, {"Authorization": "Bearer " + token})
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            detail = str(exc) if isinstance(exc, RuntimeError) else type(exc).__name__
            self.log("%s failed: %s; retrying next run" % (what, detail))
            return False
        if status in (200, 202):
            self.log("%s of %s accepted (HTTP %d)" % (what, group, status))
            return True
        if status == 404:
            self.log("%s: %s is already gone" % (what, group))
            return True
        self.log("ARM refused the %s of %s (HTTP %d: %s); retrying next run"
                 % (what, group, status, body[:200].decode("utf-8", "replace")))
        return False

    def delete_resource_group(self):
        return self._arm("DELETE", "", self.az["api_version"], "deletion of the resource group")

    def deallocate_vm(self):
        return self._arm("POST", "/providers/Microsoft.Compute/virtualMachines/{vm}/deallocate",
                         self.az["compute_api_version"], "deallocation of the VM")


def _fmt(seconds):
    if seconds is None:
        return "off"
    s = int(float(seconds))
    return "%dh%02dm" % (s // 3600, (s % 3600) // 60) if s >= 3600 else "%dm%02ds" % (s // 60, s % 60)


def _iso(ts):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def _num(x):
    return ("%.1f" % x).rstrip("0").rstrip(".")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    path = argv[argv.index("--config") + 1] if "--config" in argv else "/etc/workbench/guard.json"
    try:
        with open(path) as fh:
            config = json.load(fh)
    except (OSError, ValueError) as exc:
        print("workbench-guard: cannot read config %s: %s" % (path, exc), file=sys.stderr)
        return 2
    config["_config_path"] = os.path.abspath(path)
    guard = Guard(config)
    if "--end-bill" in argv:
        action = argv[argv.index("--end-bill") + 1] if len(argv) > argv.index("--end-bill") + 1 else "terminate"
        if action not in ("terminate", "stop"):
            print("workbench-guard: --end-bill takes terminate or stop, not %r" % action, file=sys.stderr)
            return 2
        here = "--only-here" in argv
        guard.log("DECISION: end-bill %s requested by %s" % (
            action, "another node of the launch" if here else "the job's on_finish"))
        return 0 if guard.end_bill(action, only_here=here) else 1
    reason = guard.check()
    if reason:
        guard.fire(reason)
    else:
        guard.save_state()
    return 0


if __name__ == "__main__":
    sys.exit(main())
