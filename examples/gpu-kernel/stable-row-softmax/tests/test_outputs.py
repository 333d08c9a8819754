"""Grades /app/kernel.py: the kernel itself under several launch configurations (incl. threads past the
last row), numerical stability, the host wrapper, and guards that the result comes from a @cuda.jit
kernel rather than numpy, scipy or the reference."""

import ast
import importlib.util

import numpy as np
import pytest

KERNEL_PATH = "/app/kernel.py"
# numba.cuda.jit returns one of these (simulator, numba >= 0.54 on a GPU, older numba).
KERNEL_TYPES = {"FakeCUDAKernel", "CUDADispatcher", "Dispatcher"}
FORBIDDEN_IMPORTS = {"reference", "scipy", "torch", "cupy"}
# Host-side array ops that would compute the softmax without the kernel (math.exp is fine).
FORBIDDEN_CALLS = {"exp", "max", "amax", "nanmax", "sum", "nansum", "softmax", "logsumexp", "apply_along_axis"}


def load_module():
    spec = importlib.util.spec_from_file_location("kernel_under_test", KERNEL_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def mod():
    return load_module()


def expected(x):
    shifted = x - x.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


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


def random_matrix(rows, cols, seed, scale=3.0):
    return np.random.default_rng(seed).standard_normal((rows, cols)) * scale


def test_kernel_is_cuda_jit(mod):
    assert type(mod.softmax_rows_kernel).__name__ in KERNEL_TYPES, "softmax_rows_kernel must use @cuda.jit"


def test_no_host_side_softmax():
    tree = ast.parse(open(KERNEL_PATH).read())
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        for name in names:
            assert name.split(".")[0] not in FORBIDDEN_IMPORTS, f"kernel.py must not import {name}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if node.func.attr in FORBIDDEN_CALLS and not (isinstance(owner, ast.Name) and owner.id == "math"):
                pytest.fail(f"kernel.py calls .{node.func.attr}() on line {node.lineno}: compute it in the kernel")


@pytest.mark.parametrize(
    ("rows", "cols", "blocks", "threads"),
    [(130, 7, 3, 64), (5, 4, 1, 64), (64, 3, 1, 64), (65, 1, 2, 64), (33, 10, 2, 32)],
)
def test_kernel_rows_and_bounds(mod, rows, cols, blocks, threads):
    x = random_matrix(rows, cols, seed=rows * 31 + cols)
    out = np.full((rows, cols), np.nan)
    mod.softmax_rows_kernel[blocks, threads](x, out)
    np.testing.assert_allclose(out, expected(x), rtol=1e-10, atol=1e-12)


def test_kernel_is_numerically_stable(mod):
    x = np.array([[1000.0, 999.0, -1000.0], [-800.0, -801.0, -805.0], [710.0, 710.0, 710.0], [0.0, 0.0, 0.0]])
    out = np.full(x.shape, np.nan)
    mod.softmax_rows_kernel[1, 64](x, out)
    assert np.isfinite(out).all(), f"non-finite values: {out}"
    np.testing.assert_allclose(out, expected(x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (1, 9), (63, 5), (64, 2), (129, 6)])
def test_wrapper_returns_kernel_output(mod, monkeypatch, rows, cols):
    kernel = TaggingKernel(mod.softmax_rows_kernel)
    monkeypatch.setattr(mod, "softmax_rows_kernel", kernel)
    x = random_matrix(rows, cols, seed=rows + 1000 * cols, scale=50.0)
    before = x.copy()
    got = mod.softmax_rows(x)
    assert kernel.launches == 1, f"softmax_rows must launch the kernel once (launched {kernel.launches} times)"
    assert isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == (rows, cols)
    np.testing.assert_array_equal(x, before)
    want = expected(before)
    assert not np.allclose(got, want), "softmax_rows computed the result without returning the kernel's output"
    np.testing.assert_allclose(got - TaggingKernel.TAG, want, rtol=1e-10, atol=1e-12)


def test_wrapper_untouched_kernel(mod):
    x = random_matrix(70, 4, seed=5, scale=100.0)
    got = mod.softmax_rows(x)
    np.testing.assert_allclose(got, expected(x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got.sum(axis=1), np.ones(70), rtol=1e-12)
