#!/usr/bin/env python3
"""Screenshots of the launch wizard with a container image (issue 34), in English and Simplified Chinese.

    xvfb-run -a python scripts/screenshots_image.py docs/screenshots [--lang en zh_CN]

The job page opened on a spec with an image, a registry login, shm size and user
(``wizard-image-job``), and the review page that names the image and asks for the registry's password
as a launch secret, typed and masked (``wizard-image-review``); and a spec whose login takes the password saved
with ``workbench registry login`` (``password: keyring``), which the job page offers (``wizard-image-saved-login``).  The offers come from the "Fake Cloud
(tests)" plugin of tests/fixtures/plugins, labelled as a test cloud; nothing is launched.  Each language runs
in its own process with a throwaway WORKBENCH_HOME.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

SPEC = """name: train-in-container
run: torchrun --nproc_per_node=gpu train.py
resources:
  gpu: V100:1
secrets: [REGISTRY_TOKEN]
image:
  name: registry.example.com/team/pytorch:24.05
  registry_auth: {username: ci-bot, password: REGISTRY_TOKEN}
  shm_size: 16g
  user: "1000:1000"
ports: [{port: 6006, name: tensorboard}]
guards:
  max_runtime: 2h
"""


def one(lang: str, out: Path) -> int:
    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "plugins"))
    os.environ["WORKBENCH_LANG"] = lang
    import screenshots as base
    from workbench.app import make_application

    app = make_application()
    from workbench.core.domain.models import Profile
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store
    from workbench.ui.launch.launch_wizard import LaunchWizard
    from workbench.ui.runtime.session import Session

    home = Path(os.environ["WORKBENCH_HOME"])
    spec_file = home / "train-in-container.yaml"
    spec_file.write_text(SPEC, encoding="utf-8")
    store = Store.open()
    creds = base._MemoryCredentials()
    acc = Accounts(store, entries=discover(), credentials=creds)
    acc.save_profile(Profile("fake-lab", "fakecloud", "fake-east"))
    creds.set("fakecloud", "fake-lab", {"account": "lab-account", "token": "not-a-real-token"})
    session = Session(acc)
    try:
        def shot(name: str, widget) -> None:
            app.processEvents()
            path = out / f"{name}-{lang}.png"
            widget.grab().save(str(path))
            print(f"  {path}")

        wiz = LaunchWizard(session, spec_path=str(spec_file))
        wiz.resize(1000, 700)
        wiz.show()
        base._pump(app, 0.5)
        shot("wizard-image-job", wiz)
        wiz.next()
        base._wait(app, lambda: wiz.offer_page.isComplete())
        wiz.next()
        wiz.next()
        base._pump(app, 0.3)
        wiz.review_page.secrets.edits["REGISTRY_TOKEN"].setText("not-a-real-password")
        base._pump(app, 0.5)
        shot("wizard-image-review", wiz)
        wiz.reject()
        # a login saved with `workbench registry login` (here in the screenshot's own memory store): the job page
        # offers it, and the review asks for nothing
        from workbench.core.providers.registry_logins import RegistryLogins

        RegistryLogins(creds).save("registry.example.com", "ci-bot", "not-a-real-password")
        saved_file = home / "train-saved-login.yaml"
        saved_file.write_text(SPEC.replace("secrets: [REGISTRY_TOKEN]\n", "").replace("password: REGISTRY_TOKEN",
                                                                                      "password: keyring"))
        wiz = LaunchWizard(session, spec_path=str(saved_file))
        wiz.resize(1000, 700)
        wiz.show()
        base._pump(app, 0.5)
        shot("wizard-image-saved-login", wiz)
        wiz.reject()
        return 0
    finally:
        session.shutdown()
        store.close()


def main(argv: list[str]) -> int:
    from screenshots import per_language

    return per_language(__file__, one, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
