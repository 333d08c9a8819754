#!/bin/bash
set -euo pipefail
cat > /app/kernel.py <<'PY'
"""Row-wise softmax on the GPU with numba.cuda: one thread per row."""

import math

import numpy as np
from numba import cuda

THREADS_PER_BLOCK = 64


@cuda.jit
def softmax_rows_kernel(x, out):
    r = cuda.grid(1)
    if r >= x.shape[0]:
        return  # threads past the last row (the grid is rounded up to whole blocks)
    cols = x.shape[1]
    # Subtract the row maximum so exp() never overflows.
    m = x[r, 0]
    for j in range(1, cols):
        if x[r, j] > m:
            m = x[r, j]
    total = 0.0
    for j in range(cols):
        e = math.exp(x[r, j] - m)
        out[r, j] = e
        total += e
    for j in range(cols):
        out[r, j] = out[r, j] / total


def softmax_rows(x):
    """Return the row-wise softmax of the 2-D array x as a new float64 numpy array."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    rows = x.shape[0]
    d_x = cuda.to_device(x)
    d_out = cuda.device_array(x.shape, dtype=np.float64)
    blocks = max(1, (rows + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK)
    softmax_rows_kernel[blocks, THREADS_PER_BLOCK](d_x, d_out)
    return d_out.copy_to_host()
PY
cd /app && python3 -c "import numpy as np, kernel; print(kernel.softmax_rows(np.array([[1.0, 2.0], [1000.0, 0.0]])))"
