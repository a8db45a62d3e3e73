"""Every CLI command and flag says what it does, and the commands the examples and docs name exist."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from workbench.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]
#: flags hidden on purpose (tests' knobs and a compatibility alias), with why
HIDDEN = {
    ("workbench", "--json"): "the same flag after the command is documented; this spelling is an alias",
    ("workbench logs", "--interval"): "poll period for tests",
    ("workbench run", "--interval"): "poll period for tests",
    ("workbench watch", "--now"): "tests judge the guards as of a given time",
}


def _walk(parser: argparse.ArgumentParser, path: str):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {c.dest: c.help for c in action._choices_actions}
            for name, sub in action.choices.items():
                yield f"{path} {name}", "(command)", helps.get(name)
                yield from _walk(sub, f"{path} {name}")
        elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield path, (action.option_strings or [action.dest])[-1 if action.option_strings else 0], action.help


def test_every_command_flag_and_argument_has_a_help_text():
    missing, hidden = [], set()
    for path, name, text in _walk(build_parser(), "workbench"):
        if text == argparse.SUPPRESS:
            hidden.add((path, name if name.startswith("-") else name))
        elif not text or not text.strip():
            missing.append(f"{path} {name}")
    assert missing == [], "without a help text: " + ", ".join(missing)
    found = {(p, n) for p, n in hidden}
    long_names = {(p, n) for p, n in HIDDEN}
    assert found == long_names, f"hidden flags changed: {sorted(found ^ long_names)}"


def test_the_walk_sees_the_whole_tree():
    seen = {path for path, _, _ in _walk(build_parser(), "workbench")}
    assert {"workbench launch", "workbench profiles add", "workbench credentials set", "workbench run",
            "workbench start"} <= seen
    assert set(COMMANDS) <= {p.split()[1] for p in seen if len(p.split()) > 1}


def test_commands_named_in_the_examples_and_docs_exist():
    """'Try it with: workbench run …' must name a real command (it once named one that did not exist)."""
    commands = set(build_parser()._subparsers._group_actions[0].choices)
    texts = [p for p in (ROOT / "resources" / "examples").glob("*.yaml")] + [ROOT / "README.md", ROOT / "docs" / "cli.md"]
    named = set()
    for path in texts:
        # a command line: in backticks, at a line's start (code blocks) or after "Try it with:"
        for m in re.finditer(r"(?:`|^[#\s]*|with:\s+)workbench ([a-z][a-z-]+)", path.read_text(encoding="utf-8"),
                             re.M):
            named.add((m.group(1), path.name))
    unknown = sorted((cmd, where) for cmd, where in named if cmd not in commands)
    assert unknown == [], f"commands that do not exist: {unknown}"
    assert ("run", "local-smoke.yaml") in named
