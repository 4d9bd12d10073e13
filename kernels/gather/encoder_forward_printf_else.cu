#include <cstdio>

// The encoder with its debug print written the other way round: the gather in the `if`,
// the report of a bad token id in the `else`. Prints what encoder_forward_printf prints,
// thread by thread (kernels/gather/printf_compared.toml).
extern "C" __global__ void encoder_forward_printf_else(float* out, const int* inp,
                                                       const float* wte, const float* wpe,
                                                       int B, int T, int C, int V)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= B * T * C)
        return;
    int bt = idx / C;
    int ix = inp[bt];
    if (0 <= ix && ix < V) {
        out[idx] = wte[ix * C + idx % C] + wpe[(bt % T) * C + idx % C];
    } else {
        printf("encoder: token %d at (%d) is out of range\n", ix, bt);
    }
}
