"""The Cloud Function's (2nd gen) entry point `handler`: a Pub/Sub message announcing a new version
table refreshes that family's unified view.  All logic lives in uniview.cloudfn; this module is what
functions-framework loads (`--source <this file> --target handler`): functions/main.py re-exports it
for a deployment, and `uniview demo` serves it from the installed package.

Returning acknowledges the message; an exception makes Pub/Sub redeliver it.
"""

import functions_framework
from cloudevents.http import CloudEvent

from uniview.cloudfn.handler import handle_cloud_event
from uniview.cloudfn.logs import configure_logging

configure_logging()


@functions_framework.cloud_event
def handler(cloud_event: CloudEvent) -> None:
    """google.cloud.pubsub.topic.v1.messagePublished -> refresh `<table>_unified` (see uniview.cloudfn.handler)."""
    handle_cloud_event(cloud_event)
