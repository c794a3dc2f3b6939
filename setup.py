"""Builds the Cython extension modules of descent/search_cy/ (metadata lives in
pyproject.toml)."""
import os
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "cdivision": True,
    "initializedcheck": False,
    "nonecheck": False,
    "embedsignature": True,
}

extensions = [
    Extension(
        str(path.with_suffix("")).replace("/", "."),
        [str(path)],
        # the kernels' C headers, which a module cimporting a kernel also includes
        include_dirs=[np.get_include(), "descent/search_cy/games"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        # no FMA contraction: a network value must not depend on the CPU it runs on
        extra_compile_args=["-O3", "-ffp-contract=off"],
    )
    for path in sorted(Path("descent/search_cy").rglob("*.pyx"))
    # DESCENT_ONLY=hex,state rebuilds a subset during development.
    if not os.environ.get("DESCENT_ONLY") or path.stem in os.environ["DESCENT_ONLY"].split(",")
]

# every core: the C translation (cythonize) and the compilation (build_ext) run in parallel
CORES = os.cpu_count() or 1
setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES, nthreads=CORES),
      options={"build_ext": {"parallel": CORES}})
