"""The `uniview` command line: a thin adapter over the packages below it (main.py; sink.py for
`uniview sink`), with the shared options (options.py) and output (output.py)."""
