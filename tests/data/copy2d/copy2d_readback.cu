// The copy, then each thread reads its own output back (volatile: the load stays) and stores
// it again. Equivalent, but a load from the write-only buffer is outside what indexed buffers
// represent: keq must say so by name rather than guess.
extern "C" __global__ void copy2d_readback(const float* in, float* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) {
        out[y * cols + x] = in[y * cols + x];
        float v = ((volatile float*)out)[y * cols + x];
        out[y * cols + x] = v;
    }
}
