// Equivalent to stamp.cu: the CTA's x index recomputed from the column (x / 16).
extern "C" __global__ void stamp_shift(const unsigned* in, unsigned* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[y * cols + x] = in[y * cols + x] + ((unsigned)x >> 4);
}
