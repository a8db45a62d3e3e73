"""Make the Azure SDKs' first-time model set-up safe when several threads do it at once.

The generated models of azure-mgmt-compute ≥ 38 (and of network, storage and subscriptions) build a
table of their fields the first time an object of a class is made (``Model.__new__``): they iterate the
class's and its parents' ``__dict__`` and then write the table onto the class.  Two threads doing that
for related classes at the same moment make one of them raise ``dictionary changed size during
iteration`` — and the SDK's deserializer swallows any error and hands back the raw JSON instead, so a
caller gets a ``dict`` where a model was expected (Azure/azure-sdk-for-python#47426, fixed in the
generator by microsoft/typespec#11236, not yet in a released azure-mgmt-compute).

Seen here: ``workbench status`` lists every Azure profile at once, each on its own thread, in a fresh
process — one profile failed with ``'dict' object has no attribute 'code'`` (a VM's instance-view
status left as JSON).  The fix here: the set-up (only that, once per class) runs under one lock; an
object of a class already set up is made without it.
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType
from typing import Any

_SETUP = threading.RLock()
_MARK = "_workbench_thread_safe"


def make_thread_safe(model_base: ModuleType) -> bool:
    """Wrap ``model_base.Model.__new__`` so a class's first set-up is done by one thread at a time.

    Returns False when the module has no such model (an SDK generation without lazy set-up) or is
    already wrapped.
    """
    model = getattr(model_base, "Model", None)
    original = model.__dict__.get("__new__") if isinstance(model, type) else None
    calculated = getattr(model, "_calculated", None)
    if original is None or not isinstance(calculated, set) or model.__dict__.get(_MARK):
        return False
    make = original.__func__ if isinstance(original, staticmethod) else original

    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        if f"{cls.__module__}.{cls.__qualname__}" in calculated:
            return make(cls, *args, **kwargs)  # set up already: nothing written to any class
        with _SETUP:
            return make(cls, *args, **kwargs)

    model.__new__ = staticmethod(__new__)
    setattr(model, _MARK, True)
    return True


def guard(package: str) -> None:
    """Apply :func:`make_thread_safe` to ``package``'s models (e.g. "azure.mgmt.compute"), once."""
    try:
        module = importlib.import_module(f"{package}._utils.model_base")
    except ImportError:
        return  # an older SDK generation without lazy model set-up
    with _SETUP:
        make_thread_safe(module)
