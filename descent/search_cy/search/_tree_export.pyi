"""Type stubs of _tree_export.pyx: C functions only, cimported by bestfirst.pyx (whose
walk_tree and learning_data are their Python entry points)."""
