"""`uniview explain`: why each unified column has its type (model.py), as text or JSON (output.py)
or an HTML page (html.py)."""
