// Equivalent to copy2d.cu, but CTA (bx, by) copies the tile of CTA (nx - 1 - bx, by): the
// two kernels write each element from different CTAs, which one symbolic CTA cannot compare
// (verifier/symbolic_cta.py); the full maximal launch proves it.
extern "C" __global__ void copy2d_reversed(const float* in, float* out, int rows, int cols)
{
    int x = (gridDim.x - 1 - blockIdx.x) * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[y * cols + x] = in[y * cols + x];
}
