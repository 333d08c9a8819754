#!/bin/bash
set -euo pipefail
cat > /app/kernel.py <<'PY'
"""SAXPY on the GPU with numba.cuda: out = a * x + y."""

import numpy as np
from numba import cuda

THREADS_PER_BLOCK = 128


@cuda.jit
def saxpy_kernel(a, x, y, out):
    # Grid-stride loop: each thread handles i, i + gridsize, ... so any launch covers the array.
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.shape[0], stride):
        out[i] = a * x[i] + y[i]


def saxpy(a, x, y):
    """Return a * x + y as a new float64 numpy array, computed by saxpy_kernel."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    n = x.shape[0]
    d_x = cuda.to_device(x)
    d_y = cuda.to_device(y)
    d_out = cuda.device_array(n, dtype=np.float64)
    blocks = max(1, (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK)
    saxpy_kernel[blocks, THREADS_PER_BLOCK](float(a), d_x, d_y, d_out)
    return d_out.copy_to_host()
PY
cd /app && python3 -c "import numpy as np, kernel; print(kernel.saxpy(2.0, np.arange(5.0), np.ones(5)))"
