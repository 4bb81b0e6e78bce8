"""Every error uniview raises on purpose derives from UniviewError: one clear line for the user."""


class UniviewError(Exception):
    """Base class: the message is meant to be shown to the user as is."""


class TypeParseError(UniviewError):
    """A data_type string is not a BigQuery type uniview understands."""


class IdentifierError(UniviewError):
    """A dataset, table or column name is not a valid BigQuery identifier."""


class PlanError(UniviewError):
    """The family cannot be expressed as views within BigQuery's limits."""


class NotFoundError(UniviewError):
    """The requested table family or dataset does not exist."""


class WarehouseError(UniviewError):
    """The warehouse could not be reached, or refused a statement."""


class TransientWarehouseError(WarehouseError):
    """A warehouse failure that a later retry may fix (5xx, rate limits, lock contention)."""


class ConfigError(UniviewError):
    """A setting (URL, environment variable, option) is invalid."""
