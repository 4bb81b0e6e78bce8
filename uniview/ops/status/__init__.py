"""`uniview status`: what every family, version and quarantine holds (report.py), read from a
warehouse (collect.py), shown in the terminal or as JSON (output.py)."""
