"""The Pub/Sub-triggered Cloud Function: configuration, message parsing, logging, event handling.

functions/main.py is a thin adapter over `handle_cloud_event`; the refresh itself is the same
code the CLI runs (uniview.ops.refresh.refresh).
"""

from uniview.cloudfn.config import ENV_VARS, FunctionConfig, get_config, load_config
from uniview.cloudfn.handler import EventResult, handle_cloud_event
from uniview.cloudfn.logs import configure_logging

__all__ = [
    "ENV_VARS",
    "EventResult",
    "FunctionConfig",
    "configure_logging",
    "get_config",
    "handle_cloud_event",
    "load_config",
]
