"""`python -m uniview.sink ...` is `uniview sink ...`."""

from uniview.sink.command import main

if __name__ == "__main__":
    main()
