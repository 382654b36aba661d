"""A plug-in package's front module: its entry point names a class defined in another module.

``toyminimal = tests.plugins.reexport_family:Minimal``. Imported before lshsim, this module is
still being imported when its entry point is met, and the class is defined in
:mod:`tests.plugins.minimal_family`, so the registry registers it at the next lookup by name.
"""

from __future__ import annotations

from tests.plugins.minimal_family import Minimal

__all__ = ["Minimal"]
