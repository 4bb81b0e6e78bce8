"""The pure core: the facts every other package shares (types, schema, identifiers, limits, the
landing layout, the notification contract) and the rules that settle them (resolve, renames,
render). No I/O: it imports nothing from uniview outside itself."""
