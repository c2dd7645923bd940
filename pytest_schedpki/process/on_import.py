"""Run a callback when a module is first imported, without importing it now (a ``sys.meta_path``
finder that watches one name; PEP 451's find_spec / exec_module).

The in-process transport patches httpx's transport this way when httpx is not imported yet: importing
it only to patch it would cost every plugin session ~20 ms and ~6,000 long-lived objects (httpx
brings click), which each later full garbage collection walks.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from types import ModuleType

_lock = threading.RLock()


class _Watch:
    """The finder of one watched module name (see :func:`when_imported`)."""

    def __init__(self, name: str, callback: Callable[[ModuleType], None]):
        self.name, self.callback = name, callback

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        specs = (f.find_spec(name, path, target) for f in list(sys.meta_path) if f is not self and hasattr(f, "find_spec"))
        spec = next((s for s in specs if s is not None), None)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:  # the loader's own, then the callback
            try:
                run(module)
            finally:
                loader.__dict__.pop("exec_module", None)  # the loader is left as it was
            with _lock:
                if self in sys.meta_path:
                    sys.meta_path.remove(self)
                    self.callback(module)

        loader.exec_module = exec_module
        return spec


def when_imported(name: str, callback: Callable[[ModuleType], None]) -> Callable[[], None]:
    """Call ``callback(module)`` once module ``name`` (a top-level name) has run: now when it is
    already imported, else right after its first import (in the importing thread; a failed import
    calls nothing and keeps watching). Returns ``cancel()``: stop watching (no-op once called)."""
    with _lock:
        module = sys.modules.get(name)
        if module is not None:
            callback(module)
            return lambda: None
        watch = _Watch(name, callback)
        sys.meta_path.insert(0, watch)

    def cancel() -> None:
        with _lock:
            if watch in sys.meta_path:
                sys.meta_path.remove(watch)
    return cancel
