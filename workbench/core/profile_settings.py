"""Reading a profile's string settings as flags and bounded numbers, with errors that name the key.

Plugins keep their own setting names; this is the one place that says what a
true flag is and how a bad number is reported.  Plain Python, any thread.
"""

from __future__ import annotations

import math

from .errors import ConfigError

TRUE_WORDS = ("1", "true", "yes", "on")


def flag(raw: str | None) -> bool:
    """True for 1/true/yes/on (any case); anything else, or nothing, is False."""
    return str(raw or "").strip().lower() in TRUE_WORDS


def number(profile: str, key: str, raw: str | None, default: float, low: float, high: float) -> float:
    """``raw`` as a finite number in [low, high]; ``default`` when empty; ConfigError otherwise."""
    if raw is None or str(raw).strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not low <= value <= high:
        raise ConfigError(f"profile {profile!r}: {key} must be a number from {low:g} to {high:g}, not {raw!r}",
                          hint=f"edit the profile's settings: {key}={default:g}")
    return value
