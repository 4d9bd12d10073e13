// Reference: 1-D stencil of radius 3, out[i] = in[i-3] + ... + in[i+3], with elements outside
// [0, n) read as 0. One thread per output, all reads from global memory.
constexpr int R = 3;

extern "C" __global__ void stencil_naive(const int* in, int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int sum = 0;
    for (int j = -R; j <= R; ++j) {
        int k = i + j;
        if (k >= 0 && k < n)
            sum += in[k];
    }
    out[i] = sum;
}
