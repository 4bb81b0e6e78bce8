"""`python -m uniview.sink ...` is `uniview sink ...` (an entry point: the command lives in uniview.cli.sink)."""

from uniview.cli.sink import main

if __name__ == "__main__":
    main()
