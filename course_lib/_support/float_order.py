"""One order of float sums for MKL and torch (see :mod:`course_lib.e5_torch`), asked for by
environment variables they read when they first compute, not at import: the package root
imports this module first, before anything computes. Variables a user set are kept."""

import os

for _name, _value in (("MKL_CBWR", "AVX2,STRICT"), ("ATEN_CPU_CAPABILITY", "avx2")):
    os.environ.setdefault(_name, _value)
