// Thread coarsening: each thread copies two elements, 16 rows apart, so the grid has half as
// many CTAs along y as copy2d.cu's. The kernels launch different grids: one symbolic CTA per
// kernel (verifier/symbolic_cta.py).
extern "C" __global__ void copy2d_coarse(const float* in, float* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * (2 * blockDim.y) + threadIdx.y;
    for (int k = 0; k < 2; ++k, y += blockDim.y)
        if (x < cols && y < rows)
            out[y * cols + x] = in[y * cols + x];
}
