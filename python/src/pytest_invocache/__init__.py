"""pytest-invocache: record and replay model API calls in pytest through ``invocache proxy``.

See the package README for use; :class:`Invocache` is what the ``invocache``
fixture gives a test.
"""

from __future__ import annotations

from .naming import cassette_path_for, named_cassette_path
from .plugin import replay_miss, rerecord_command, resolve_mode
from .session import Invocache

__all__ = [
    "Invocache",
    "cassette_path_for",
    "named_cassette_path",
    "replay_miss",
    "rerecord_command",
    "resolve_mode",
]
__version__ = "0.1.0"
