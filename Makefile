# Cloud GPU Workbench — the README's commands.  Each target is self-sufficient on a
# fresh Debian machine as root: it installs the Debian packages it needs (only the
# missing ones), creates .venv, installs the project, then runs.  A second run on a
# warm machine downloads nothing (pip runs only when pyproject.toml changed).

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PYTEST_ARGS ?=

# Qt (xcb + offscreen platforms) runtime libraries, a CJK font for the Chinese UI.
DEBS_RUN  := libgl1 libegl1 libxkbcommon0 libxkbcommon-x11-0 libx11-6 libx11-xcb1 libglib2.0-0 \
             libfreetype6 libfontconfig1 libdbus-1-3 libxcb-cursor0 libxcb-icccm4 libxcb-image0 \
             libxcb-keysyms1 libxcb-render-util0 libxcb-render0 libxcb-shape0 libxcb-util1 libxcb-xkb1 \
             libxcb-randr0 libxcb-shm0 libxcb-sync1 libxcb-xfixes0 libxcb-glx0 fonts-wqy-microhei
# rclone moves the storage mounts of jobs on this computer (cloud machines install their own).
DEBS_RUN  += rclone
# Tests also need a private D-Bus session with a real Secret Service, Xvfb for screenshots, a
# real OpenSSH server (started on a loopback port by the SSH tests) with its client tools, and
# objdump (binutils) for the installer's packaging tests.
DEBS_TEST := $(DEBS_RUN) dbus dbus-x11 dbus-user-session gnome-keyring xvfb xauth openssh-server openssh-client \
             binutils
# The controller's "machine" in tests (a loopback sshd) makes its virtual environment with the system python3.
DEBS_TEST += python3-venv
# Node runs Azurite, the Azure Blob emulator of the storage tests (installed once into ./node_modules).
DEBS_TEST += nodejs
AZURITE   := node_modules/.bin/azurite-blob
# Mesa's software OpenGL (llvmpipe) under Xvfb: the Monitor's OpenGL-or-raster choice is tested and measured on it
DEBS_TEST += libgl1-mesa-dri
# Containers (issue 34): the tests start their own Docker daemon and a private registry with a password
# (htpasswd), and build the job image from Debian packages (debootstrap; cached in ~/.cache/workbench-tests).
DEBS_TEST += docker.io debootstrap docker-registry apache2-utils
# podman: a Local job's image run with podman instead of Docker (WORKBENCH_CONTAINER_ENGINE=podman; rootful, storage in a scratch folder).
DEBS_TEST += podman
# A real Slurm cluster (issue 35): the tests start munged, slurmctld and three slurmd under a scratch dir (tests/support/slurm.py).
DEBS_TEST += slurm-wlm munge
# A Slurm login node that asks for a one-time code after the key (2FA/TOTP, keyboard-interactive): PAM's pam_oath.
DEBS_TEST += libpam-oath
# The packaged app: PyInstaller needs objdump (binutils); the bundle takes the Qt runtime libraries
# from DEBS_RUN; installer-test validates the menu entry, opens the window under Xvfb and runs the
# installed app's self-test against a real Secret Service.
DEBS_INSTALLER := $(DEBS_TEST) desktop-file-utils
# The multi-node tests with the real engines: Debian's CPU PyTorch (gloo; for /usr/bin/python3) and
# OpenMPI with mpi4py. Measured: ~200 packages, ~160 MB to download, ~660 MB installed, ~50 s to
# install from a warm package cache; the 4 tests take ~45 s on 2 cores. `make test` installs and runs them
# (CI runs `make test`); `make test-distributed` runs only them.
DEBS_DISTRIBUTED := python3-torch openmpi-bin python3-mpi4py

.PHONY: run test bench doctor screenshots i18n clean debs-run debs-test installer installer-test debs-installer
.PHONY: test-distributed debs-distributed

run: debs-run $(VENV)/.stamp-run
	@if [ "$$(uname)" = Linux ] && [ -z "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ] && [ -z "$${QT_QPA_PLATFORM:-}" ]; then \
	    echo "No display found (DISPLAY/WAYLAND_DISPLAY unset). On a headless machine use: xvfb-run -a make run" >&2; exit 1; fi
	$(VENV)/bin/workbench gui

test: debs-test debs-distributed $(VENV)/.stamp-test $(AZURITE)
	QT_QPA_PLATFORM=offscreen WORKBENCH_SECRET_SERVICE=1 WORKBENCH_DISTRIBUTED=1 \
	    scripts/with-secret-service.sh $(PY) -m pytest -n 2 $(PYTEST_ARGS)

# Multi-node jobs with real torchrun and mpirun: Local nodes and loopback sshd nodes (tests/distributed;
# also part of `make test`).
test-distributed: debs-test debs-distributed $(VENV)/.stamp-test
	QT_QPA_PLATFORM=offscreen WORKBENCH_SECRET_SERVICE=1 WORKBENCH_DISTRIBUTED=1 \
	    scripts/with-secret-service.sh $(PY) -m pytest -n 2 tests/distributed $(PYTEST_ARGS)

bench: debs-test $(VENV)/.stamp-test
	$(PY) -m benchmarks

# Every main screen in English and Simplified Chinese, under a virtual X server.
screenshots: debs-test $(VENV)/.stamp-test
	xvfb-run -a -s "-screen 0 1400x900x24" $(PY) scripts/screenshots.py docs/screenshots
	xvfb-run -a -s "-screen 0 1400x900x24" $(PY) scripts/screenshots_ports.py docs/screenshots
	xvfb-run -a -s "-screen 0 1400x900x24" $(PY) scripts/screenshots_image.py docs/screenshots
	xvfb-run -a -s "-screen 0 1400x900x24" $(PY) scripts/screenshots_slurm.py docs/screenshots

# Extract tr() strings into the .ts catalogues and compile the .qm files.
i18n: $(VENV)/.stamp-run
	$(PY) scripts/i18n.py

# The packaged app for people without Python: PyInstaller bundle, .deb and .tar.gz in dist/
# (installer/README.md: the Windows and macOS packages are built by .github/workflows/installers.yml).
installer: debs-installer $(VENV)/.stamp-installer
	$(PY) installer/build.py

# Install the .deb on this machine (root), run the installed app's self-test, a Local job from the
# installed CLI, then remove it and check that nothing is left.
installer-test: installer
	scripts/with-secret-service.sh $(PY) installer/linux/check_installed.py

doctor: $(VENV)/.stamp-run
	$(VENV)/bin/workbench doctor

debs-run:
	@scripts/ensure-debs.sh $(DEBS_RUN) $$($(PYTHON) -c 'import ensurepip' 2>/dev/null || echo python3-venv)

debs-test:
	@scripts/ensure-debs.sh $(DEBS_TEST) $$($(PYTHON) -c 'import ensurepip' 2>/dev/null || echo python3-venv)

debs-distributed:
	@scripts/ensure-debs.sh $(DEBS_DISTRIBUTED)

debs-installer:
	@scripts/ensure-debs.sh $(DEBS_INSTALLER) $$($(PYTHON) -c 'import ensurepip' 2>/dev/null || echo python3-venv)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# The stamps make a warm `make test` skip pip entirely.
# `make run` installs every in-tree cloud's SDK (the [clouds] extra): the app shows those clouds.
$(VENV)/.stamp-run: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e '.[clouds]'
	touch $@

$(VENV)/.stamp-test: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.stamp-run

# The bundle carries every cloud plugin's SDK, so the build environment needs them all: the [clouds]
# extra, the one definition of "every cloud" (`make run`'s, and both jobs' of
# .github/workflows/installers.yml: tests/installer/test_packages.py holds them to the same line).
# One pip run resolves it with PyInstaller; installer/build.py refuses to bundle without an SDK.
$(VENV)/.stamp-installer: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e '.[clouds,installer]'
	touch $@ $(VENV)/.stamp-run

# Azurite for the Azure Blob tests: once per tree (ignored by git); a second `make test` skips it.
$(AZURITE):
	@command -v npm >/dev/null 2>&1 || { echo "npm is needed to install Azurite for the storage tests: install nodejs with npm" >&2; exit 1; }
	npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error azurite@3.37.0

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
