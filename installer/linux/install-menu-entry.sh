#!/bin/sh
# install-menu-entry.sh [--remove]
#
# For the .tar.gz: adds "Cloud GPU Workbench" to your desktop's application menu, with its icon,
# pointing at THIS unpacked folder.  Per user, no root needed (files go under
# ${XDG_DATA_HOME:-~/.local/share}).  Run it again after moving the folder; --remove takes the
# entry and icons away again (your settings and data are not touched).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
entry=$data/applications/cloud-gpu-workbench.desktop

if [ "${1:-}" = "--remove" ]; then
    rm -f "$entry"
    for size in "$here"/share/icons/hicolor/*; do
        rm -f "$data/icons/hicolor/$(basename "$size")/apps/cloud-gpu-workbench.png" \
              "$data/icons/hicolor/$(basename "$size")/apps/cloud-gpu-workbench.svg"
    done
    echo "removed the menu entry"
    exit 0
fi

mkdir -p "$data/applications" "$data/icons"
cp -R "$here/share/icons/hicolor" "$data/icons/"
# Exec/TryExec point at this folder's executable (quoted: the path may contain spaces).
sed -e "s|^Exec=workbench |Exec=\"$here/workbench\" |" -e "s|^TryExec=workbench\$|TryExec=$here/workbench|" \
    "$here/share/cloud-gpu-workbench.desktop" >"$entry"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$data/applications" || true
echo "added 'Cloud GPU Workbench' to the application menu ($entry)"
