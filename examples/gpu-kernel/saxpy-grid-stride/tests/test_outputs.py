"""Grades /app/kernel.py: the kernel itself under several launch configurations, the host wrapper, and
guards that the result comes from a @cuda.jit kernel rather than numpy or the reference."""

import ast
import importlib.util

import numpy as np
import pytest

KERNEL_PATH = "/app/kernel.py"
# numba.cuda.jit returns one of these (simulator, numba >= 0.54 on a GPU, older numba).
KERNEL_TYPES = {"FakeCUDAKernel", "CUDADispatcher", "Dispatcher"}
FORBIDDEN_IMPORTS = {"reference", "scipy", "torch", "cupy"}


def load_module():
    spec = importlib.util.spec_from_file_location("kernel_under_test", KERNEL_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def mod():
    return load_module()


class TaggingKernel:
    """Stands in for the kernel: launches it, counts the launch, then adds TAG to the output argument (the
    last one). The wrapper must return exactly what the kernel wrote, so its result must show the tag; a
    result computed on the host would not."""

    TAG = 1.0

    def __init__(self, inner):
        self.inner = inner
        self.launches = 0

    def _tagged(self, launch):
        def run(*args):
            self.launches += 1
            launch(*args)
            out = args[-1]
            if isinstance(out, np.ndarray):
                out += self.TAG
            else:  # a device array
                out.copy_to_device(out.copy_to_host() + self.TAG)

        return run

    def __getitem__(self, config):
        return self._tagged(self.inner[config])

    def forall(self, *args, **kwargs):
        return self._tagged(self.inner.forall(*args, **kwargs))


def rng_arrays(n, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), rng.standard_normal(n)


def test_kernel_is_cuda_jit(mod):
    assert type(mod.saxpy_kernel).__name__ in KERNEL_TYPES, "saxpy_kernel must be decorated with @cuda.jit"


def test_no_reference_or_host_libraries():
    tree = ast.parse(open(KERNEL_PATH).read())
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        for name in names:
            assert name.split(".")[0] not in FORBIDDEN_IMPORTS, f"kernel.py must not import {name}"


@pytest.mark.parametrize(
    ("n", "blocks", "threads"),
    [(1000, 2, 32), (1000, 1, 1), (777, 3, 64), (50, 4, 128), (129, 1, 128)],
)
def test_kernel_covers_every_element(mod, n, blocks, threads):
    x, y = rng_arrays(n, seed=n + blocks)
    out = np.full(n, np.nan)
    mod.saxpy_kernel[blocks, threads](1.5, x, y, out)
    np.testing.assert_allclose(out, 1.5 * x + y, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [1, 127, 128, 129, 1000, 2049])
def test_wrapper_returns_kernel_output(mod, monkeypatch, n):
    kernel = TaggingKernel(mod.saxpy_kernel)
    monkeypatch.setattr(mod, "saxpy_kernel", kernel)
    x, y = rng_arrays(n, seed=n)
    x_before, y_before = x.copy(), y.copy()
    got = mod.saxpy(-0.75, x, y)
    assert kernel.launches == 1, f"saxpy must launch saxpy_kernel once (launched {kernel.launches} times)"
    assert isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == (n,)
    np.testing.assert_array_equal(x, x_before)
    np.testing.assert_array_equal(y, y_before)
    expected = -0.75 * x_before + y_before
    assert not np.allclose(got, expected), "saxpy computed the result without returning the kernel's output"
    np.testing.assert_allclose(got - TaggingKernel.TAG, expected, rtol=1e-12, atol=1e-12)


def test_wrapper_special_scalars(mod):
    x, y = rng_arrays(300, seed=7)
    np.testing.assert_allclose(mod.saxpy(0.0, x, y), y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mod.saxpy(1.0, x, np.zeros(300)), x, rtol=1e-12, atol=1e-12)
