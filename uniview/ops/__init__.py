"""Operations over a warehouse: refresh the views, consolidate and migrate landing tables, report
status, explain a family. Imports the pure packages and warehouse/."""
