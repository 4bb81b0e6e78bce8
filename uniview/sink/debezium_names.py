"""Identifiers as the source spells them, where Debezium's PostgreSQL connector mangles them.

The connector (pgoutput, as docs/sources.md configures it) streams a non-ASCII table or column name byte by
byte, each byte of its UTF-8 a character sign-extended to U+FF80..U+FFFF: `größe` arrives as `grￃﾶￃﾟe`, where
its snapshot sends `größe` (tests/kafka/test_debezium_connector_behaviour.py pins both), so one column would
land under two names.  The mangling is exact and reversible: every
non-ASCII character of such a name is in that range, and its low bytes are the name's UTF-8.  A name with a
non-ASCII character outside that range, or whose low bytes are not UTF-8, is not a mangled one and stays as sent.
"""

from __future__ import annotations

_FIRST_MANGLED = 0xFF80


def repaired_name(name: str) -> str:
    """The name the source spells, for a name the connector sent with each UTF-8 byte as one character."""
    if not any(ord(ch) >= _FIRST_MANGLED for ch in name):
        return name
    if any(ord(ch) >= 0x80 and not _FIRST_MANGLED <= ord(ch) <= 0xFFFF for ch in name):
        return name
    try:
        return bytes(ord(ch) & 0xFF for ch in name).decode("utf-8")
    except UnicodeDecodeError:
        return name
