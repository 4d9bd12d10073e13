#include <cstdio>

// A planted bug for the printf comparison: the bad token id printed with %u, so a negative
// id prints as 4294967295 where the reference prints -1 (kernels/gather/printf_unsigned.toml).
extern "C" __global__ void encoder_forward_printf_unsigned(float* out, const int* inp,
                                                           const float* wte, const float* wpe,
                                                           int B, int T, int C, int V)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < B * T * C) {
        int bt = idx / C;
        int t = bt % T;
        int c = idx % C;
        int ix = inp[bt];
        if (ix < 0 || ix >= V) {
            printf("encoder: token %u at (%d) is out of range\n", ix, bt);
            return;
        }
        out[idx] = wte[ix * C + c] + wpe[t * C + c];
    }
}
