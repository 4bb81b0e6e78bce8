"""Cloud Function (2nd gen) entry point `handler`, as Cloud Functions looks for it (main.py at the
source's root).  The function itself is uniview.cloudfn.entry: deploy this file with the `uniview`
package next to it (or installed) and functions/requirements.txt.
"""

from uniview.cloudfn.entry import handler

__all__ = ["handler"]
