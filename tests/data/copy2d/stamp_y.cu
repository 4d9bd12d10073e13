// Reference for stamp_y_coarse.cu: each element is its CTA's y index (the input is not read).
extern "C" __global__ void stamp_y(const unsigned* in, unsigned* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[y * cols + x] = blockIdx.y;
}
