"""Type stubs of _decision.pyx: C functions only, cimported by bestfirst.pyx."""
