#!/bin/sh
# Install the Debian packages named on the command line, but only those missing.
# Where apt is not available (another distribution, macOS) or we are not root,
# print the exact install line instead of failing obscurely.
# Usage: scripts/ensure-debs.sh [--optional] PKG...
set -eu
optional=0
if [ "${1:-}" = "--optional" ]; then optional=1; shift; fi

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "note: not a Debian/Ubuntu system; make sure the equivalents of these are installed:" >&2
    echo "  $*" >&2
    exit 0
fi

missing=""
for pkg in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
    fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "These Debian packages are needed:$missing" >&2
    echo "Install them with:" >&2
    echo "  sudo apt-get install -y --no-install-recommends$missing" >&2
    [ "$optional" -eq 1 ] && exit 0
    exit 1
fi

# Another apt or dpkg (unattended-upgrades, a software centre) may hold its lock for minutes: wait for
# it, saying so, instead of failing at once.  ENSURE_DEBS_LOCK_WAIT seconds at most (default 600).
wait_s=${ENSURE_DEBS_LOCK_WAIT:-600}
poll_s=${ENSURE_DEBS_LOCK_POLL:-5}
apt_get() {
    waited=0
    while :; do
        if out=$(apt-get "$@" 2>&1); then
            return 0
        fi
        case $out in
            *"Could not get lock"*|*"Unable to acquire the dpkg frontend lock"*|*"Unable to lock directory"*)
                if [ "$waited" -ge "$wait_s" ]; then
                    echo "$out" >&2
                    echo "another package manager still holds apt's lock after ${wait_s} s: try again when it is done" >&2
                    return 1
                fi
                [ "$waited" -eq 0 ] && echo "waiting for another package manager to finish (apt/dpkg is locked)…" >&2
                sleep "$poll_s"
                waited=$((waited + poll_s)) ;;
            *)
                echo "$out" >&2
                return 1 ;;
        esac
    done
}

echo "installing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# Only refresh the package lists when a package is really missing: a warm machine downloads nothing.
apt_get update -qq
# shellcheck disable=SC2086
apt_get install -y -qq --no-install-recommends $missing
