"""minilm: the Transformer pre-training families, built from scratch on the autograd engine."""
import os

# The kit's matrices are small: one BLAS thread is as fast as several, and several threads fight
# over the cores whenever anything else runs (measured: 10-40x slower steps under load). Only a
# default: set OPENBLAS_NUM_THREADS (or OMP_/MKL_) yourself to change it, before importing numpy.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

__version__ = "0.1.0"
