"""Planning: a family's unified views, part views and current state (plan.py), and the folding of
old versions into consolidated tables (consolidation.py). Pure: imports the core and current state."""
