// x + x + x against 3 * x, element by element: equal for every float (2x is exact, and both
// round the exact 3x once), but not the same term, so each element is a solver question; all
// of them one question up to the element's name (verifier/solvers/canonical.py).
extern "C" __global__ void triple_add(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (x[i] + x[i]) + x[i];
}

extern "C" __global__ void triple_mul(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 3.0f * x[i];
}

// Wrong: 2 * x, not 3 * x.
extern "C" __global__ void double_mul(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
