// BUG: float4-vectorized add without the scalar tail; when n % 4 != 0 the last
// n % 4 elements of c are never written.
extern "C" __global__ void vector_add_vec4_notail(const float* __restrict__ a, const float* __restrict__ b,
                                                  float* __restrict__ c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 4) {
        float4 va = reinterpret_cast<const float4*>(a)[i];
        float4 vb = reinterpret_cast<const float4*>(b)[i];
        float4 vc;
        vc.x = va.x + vb.x;
        vc.y = va.y + vb.y;
        vc.z = va.z + vb.z;
        vc.w = va.w + vb.w;
        reinterpret_cast<float4*>(c)[i] = vc;
    }
}
