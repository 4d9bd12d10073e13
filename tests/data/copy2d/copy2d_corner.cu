// BUG: thread 0 of CTA 0 also stores a constant-address element from the wrong place:
// out[0] = in[1] whenever the matrix has a second column (a store at a concrete address,
// which must go through the same write log as the others).
extern "C" __global__ void copy2d_corner(const float* in, float* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[y * cols + x] = in[y * cols + x];
    if (x == 0 && y == 0 && cols > 1)
        out[0] = in[1];
}
