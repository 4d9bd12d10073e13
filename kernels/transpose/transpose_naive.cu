// Reference: out (cols x rows) = transpose of in (rows x cols), both row-major.
// One thread per element; the global reads coalesce, the writes are strided.
extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;   // column of in
    int y = blockIdx.y * blockDim.y + threadIdx.y;   // row of in
    if (x < cols && y < rows)
        out[x * rows + y] = in[y * cols + x];
}
