"""`uniview demo`: the whole pipeline on one machine, in one command."""
