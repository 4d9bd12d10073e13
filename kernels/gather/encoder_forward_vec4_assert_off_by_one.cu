#include <cassert>

// A planted bug in the 128-bit encoder: the assert excludes the last token id (ix < V - 1),
// so the kernel traps on a valid input.
extern "C" __global__ void encoder_forward_vec4_assert_off_by_one(
    float* out, const int* inp, const float* wte, const float* wpe, int B, int T, int C, int V)
{
    int idx = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int N = B * T * C;
    if (idx < N) {
        int bt = idx / C;
        int t = bt % T;
        int c = idx % C;
        int ix = inp[bt];
        assert(ix >= 0 && ix < V - 1);
        float4 e = *reinterpret_cast<const float4*>(wte + ix * C + c);
        float4 p = *reinterpret_cast<const float4*>(wpe + t * C + c);
        *reinterpret_cast<float4*>(out + idx) =
            make_float4(e.x + p.x, e.y + p.y, e.z + p.z, e.w + p.w);
    }
}
