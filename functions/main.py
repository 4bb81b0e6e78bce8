"""Cloud Function (2nd gen) entry point `handler`: a Pub/Sub message announcing a new version
table refreshes that family's unified view.  All logic lives in uniview.cloudfn; deploy this
file with the `uniview` package next to it (or installed) and functions/requirements.txt.

Returning acknowledges the message; an exception makes Pub/Sub redeliver it.
"""

import functions_framework
from cloudevents.http import CloudEvent

from uniview.cloudfn import configure_logging, handle_cloud_event

configure_logging()


@functions_framework.cloud_event
def handler(cloud_event: CloudEvent) -> None:
    """google.cloud.pubsub.topic.v1.messagePublished -> refresh `<table>_unified` (see uniview.cloudfn.handler)."""
    handle_cloud_event(cloud_event)
