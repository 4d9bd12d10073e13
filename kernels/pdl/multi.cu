// Sides of several launches (the pairs: *.toml here; also tests/golden/test_multi_launch.py).
// griddepcontrol needs sm_90: kernels/build.py builds this file for sm_90 only.
// The reference normalizes each row by its sum in two launches (`row_sums` into a scratch
// buffer, then `divide`); the candidate fuses them into one kernel, one thread per row.

extern "C" __global__ void row_sums(const float* x, float* sums, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c++)
            s += x[r * cols + c];
        sums[r] = s;
    }
}

extern "C" __global__ void divide(const float* x, const float* sums, float* out, int rows,
                                  int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols)
        out[i] = x[i] / sums[i / cols];
}

extern "C" __global__ void fused(const float* x, float* out, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c++)
            s += x[r * cols + c];
        for (int c = 0; c < cols; c++)
            out[r * cols + c] = x[r * cols + c] / s;
    }
}

// Bug: the last column is left out of the sum.
extern "C" __global__ void fused_short(const float* x, float* out, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c + 1 < cols; c++)
            s += x[r * cols + c];
        for (int c = 0; c < cols; c++)
            out[r * cols + c] = x[r * cols + c] / s;
    }
}

// Programmatic dependent launch: `divide_pdl` waits for the launch before it
// (griddepcontrol.wait) before it reads the sums; `divide_pdl_early` reads them first.
extern "C" __global__ void row_sums_pdl(const float* x, float* sums, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c++)
            s += x[r * cols + c];
        sums[r] = s;
    }
    asm volatile("griddepcontrol.launch_dependents;");
}

extern "C" __global__ void divide_pdl(const float* x, const float* sums, float* out, int rows,
                                      int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < rows * cols ? x[i] : 0.0f;
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (i < rows * cols)
        out[i] = v / sums[i / cols];
}

extern "C" __global__ void divide_pdl_early(const float* x, const float* sums, float* out,
                                            int rows, int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = i < rows * cols ? sums[i / cols] : 1.0f;
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (i < rows * cols)
        out[i] = x[i] / s;
}
