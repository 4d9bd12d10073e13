// BUG: stamp_y.cu coarsened along y keeps writing its own blockIdx.y, which counts 32-row
// blocks where the reference's counts 16-row ones: rows 16..31 get 0 instead of 1. Both
// kernels store the very same term, `%ctaid.y`, but of different grids: one symbolic CTA per
// kernel must keep the two %ctaid.y apart, or it proves this pair.
extern "C" __global__ void stamp_y_coarse(const unsigned* in, unsigned* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * (2 * blockDim.y) + threadIdx.y;
    for (int k = 0; k < 2; ++k, y += blockDim.y)
        if (x < cols && y < rows)
            out[y * cols + x] = blockIdx.y;
}
