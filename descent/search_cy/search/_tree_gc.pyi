"""Type stubs of _tree_gc.pyx: C functions only, cimported by bestfirst.pyx."""
