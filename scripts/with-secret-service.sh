#!/bin/sh
# with-secret-service.sh CMD [ARGS...]
#
# Run CMD inside a private D-Bus session that has its own, already unlocked
# gnome-keyring Secret Service.  Used by `make test` so the credential tests
# hit a real Secret Service without ever touching the user's keyring:
#
#   * the D-Bus session is private (dbus-run-session), so CMD cannot see the
#     desktop's Secret Service;
#   * the keyring files live in a throwaway XDG_DATA_HOME, and the daemon's
#     control socket in a throwaway XDG_RUNTIME_DIR with GNOME_KEYRING_CONTROL
#     unset - otherwise `gnome-keyring-daemon --unlock` finds the desktop's
#     running daemon through them and sends the test password to IT;
#   * CMD starts only once the daemon owns org.freedesktop.secrets on the bus:
#     a daemon that is still starting when the bus goes away never notices
#     and lingers forever (seen with gnome-keyring 42 when CMD is quick);
#   * the daemon quits when the bus goes away (when CMD exits); as a backstop
#     any daemon still running from THIS run (found by its private
#     XDG_RUNTIME_DIR) is then terminated, and the temporary directory removed.
#
# The keyring password is the fixed, public string "workbench-test": the
# keyring only ever holds test data and is deleted when CMD ends.  CMD keeps
# this script's stdin, stdout and stderr.
#
# Exit status: CMD's; 1 if dbus-run-session / gnome-keyring-daemon /
# dbus-send are missing or the keyring could not be started; 2 on a usage
# error.

set -u

prog=with-secret-service.sh

if [ "$#" -eq 0 ]; then
    echo "usage: $prog CMD [ARGS...]" >&2
    echo "  runs CMD with a private, unlocked gnome-keyring Secret Service" >&2
    exit 2
fi

missing=
for tool in dbus-run-session dbus-send gnome-keyring-daemon; do
    command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
    echo "$prog: not found:$missing" >&2
    echo "  install the Debian/Ubuntu packages: sudo apt-get install gnome-keyring dbus-x11 dbus-user-session" >&2
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/workbench-secret-service.XXXXXX") || exit 1

# Terminate gnome-keyring-daemons of this run only: they are the ones whose
# environment holds our unique throwaway XDG_RUNTIME_DIR.  Waits up to ~2 s
# for them to quit on their own (they normally do, with the bus) first.
stop_daemons() {
    tries=0
    while :; do
        pids=
        for envfile in /proc/[0-9]*/environ; do
            dir=${envfile%/environ}
            [ "$(cat "$dir/comm" 2>/dev/null)" = gnome-keyring-d ] || continue
            # (a process may vanish mid-scan: silence the shell's own error too)
            if { tr '\0' '\n' <"$envfile"; } 2>/dev/null | grep -Fqx "XDG_RUNTIME_DIR=$tmp/run"; then
                pids="$pids ${dir#/proc/}"
            fi
        done
        [ -z "$pids" ] && return 0
        tries=$((tries + 1))
        if [ "$tries" -gt 20 ]; then
            # shellcheck disable=SC2086  # word splitting wanted: a pid list
            kill $pids 2>/dev/null
            return 0
        fi
        sleep 0.1
    done
}
cleanup() {
    stop_daemons
    rm -rf "$tmp" 2>/dev/null || { sleep 1; rm -rf "$tmp"; }
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -m 700 "$tmp/data" "$tmp/run" || exit 1

# Exported before dbus-run-session so the bus daemon - and any service it
# D-Bus-activates - sees the throwaway data dir too, never the user's.
unset GNOME_KEYRING_CONTROL
XDG_DATA_HOME=$tmp/data
export XDG_DATA_HOME
WORKBENCH_SECRET_SERVICE_RUNTIME_DIR=$tmp/run
export WORKBENCH_SECRET_SERVICE_RUNTIME_DIR

dbus-run-session -- sh -c '
    # Only the daemon gets the throwaway runtime dir; CMD keeps the real
    # XDG_RUNTIME_DIR (Qt and others want it) and talks to the keyring over D-Bus.
    if ! printf %s workbench-test |
        XDG_RUNTIME_DIR="$WORKBENCH_SECRET_SERVICE_RUNTIME_DIR" \
        gnome-keyring-daemon --unlock --components=secrets >/dev/null
    then
        echo "with-secret-service.sh: gnome-keyring-daemon --unlock failed" >&2
        exit 1
    fi
    unset WORKBENCH_SECRET_SERVICE_RUNTIME_DIR
    # Wait (up to 10 s) until the Secret Service is on the bus.
    n=0
    until dbus-send --session --print-reply --dest=org.freedesktop.DBus \
            /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner \
            string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true"
    do
        n=$((n + 1))
        if [ "$n" -gt 100 ]; then
            echo "with-secret-service.sh: the Secret Service did not appear on the bus" >&2
            exit 1
        fi
        sleep 0.1
    done
    exec "$@"
' sh "$@"
exit $?
