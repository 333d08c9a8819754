"""The reference op (numpy on the host): what saxpy(a, x, y) must return."""

import numpy as np


def saxpy_reference(a: float, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return a * x + y
