"""uniview: one query-safe UNION ALL view over every schema version of a CDC table."""

__version__ = "0.1.0"
