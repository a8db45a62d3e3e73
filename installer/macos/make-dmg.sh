#!/bin/sh
# make-dmg.sh "Cloud GPU Workbench.app" OUT.dmg
#
# The macOS disk image: the .app beside a link to /Applications, so people drag it across.
# Needs macOS (hdiutil, codesign).  Signing: PyInstaller signs every binary and the .app
# ad hoc ("-"), which Apple Silicon requires to run at all; with CODESIGN_IDENTITY set (a
# "Developer ID Application: …" certificate in the keychain) the .app is re-signed with it
# and the hardened runtime, ready for `xcrun notarytool submit OUT.dmg --wait` and
# `xcrun stapler staple OUT.dmg`.  Unsigned/ad-hoc builds open after right-click > Open once
# (Gatekeeper), which the README says.
set -eu
app=$1
out=$2
[ -d "$app/Contents/MacOS" ] || { echo "make-dmg.sh: not an app bundle: $app" >&2; exit 2; }

if [ -n "${CODESIGN_IDENTITY:-}" ]; then
    codesign --force --deep --options runtime --timestamp --sign "$CODESIGN_IDENTITY" "$app"
fi
codesign --verify --deep --strict "$app"

stage=$(mktemp -d "${TMPDIR:-/tmp}/workbench-dmg.XXXXXX")
trap 'rm -rf "$stage"' EXIT
ditto "$app" "$stage/$(basename "$app")"
ln -s /Applications "$stage/Applications"
mkdir -p "$(dirname "$out")"
rm -f "$out"
hdiutil create -volname "Cloud GPU Workbench" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$out"
if [ -n "${CODESIGN_IDENTITY:-}" ]; then
    codesign --force --timestamp --sign "$CODESIGN_IDENTITY" "$out"
fi
hdiutil verify "$out"
