"""The rules of `<table>_current`, what each source table holds now: one set of rules, rendered
as a view (view.py) or kept as an incrementally maintained table (table.py). Pure: imports only the core."""
