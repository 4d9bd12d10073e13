// Optimized: each thread adds four consecutive floats with 128-bit loads and stores.
// The n % 4 elements past the last full float4 are added by the first n % 4 threads.
// Launch with ceil_div(n, 4 * blockDim.x) blocks.
extern "C" __global__ void vector_add_vec4(const float* __restrict__ a, const float* __restrict__ b,
                                           float* __restrict__ c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;
    if (i < n4) {
        float4 va = reinterpret_cast<const float4*>(a)[i];
        float4 vb = reinterpret_cast<const float4*>(b)[i];
        float4 vc;
        vc.x = va.x + vb.x;
        vc.y = va.y + vb.y;
        vc.z = va.z + vb.z;
        vc.w = va.w + vb.w;
        reinterpret_cast<float4*>(c)[i] = vc;
    }
    // scalar tail
    if (i < n % 4) {
        int j = n4 * 4 + i;
        c[j] = a[j] + b[j];
    }
}
