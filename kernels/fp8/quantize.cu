// fp8 quantization as a kernel engineer writes it (cuda_fp8.h; the cvt.*.e4m3x2 / .e5m2x2
// forms need sm_89, so kernels/build.py builds this file for sm_90 only): the reference
// converts one element per thread, the candidate two per thread with the x2 intrinsic; planted bugs: the two halves swapped, e5m2 for e4m3.
// The dequantization pair widens back to f32, one code at a time against two at a time.
#include <cuda_fp8.h>

extern "C" __global__ void quantize_e4m3(const float* x, __nv_fp8_storage_t* q, float scale,
                                         int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        q[i] = __nv_cvt_float_to_fp8(x[i] * scale, __NV_SATFINITE, __NV_E4M3);
}

extern "C" __global__ void quantize_e4m3_x2(const float* x, __nv_fp8_storage_t* q, float scale,
                                            int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;         // one pair of elements
    if (2 * i + 1 < n) {
        float2 v = make_float2(x[2 * i] * scale, x[2 * i + 1] * scale);
        reinterpret_cast<__nv_fp8x2_e4m3*>(q)[i] = __nv_fp8x2_e4m3(v);
    } else if (2 * i < n) {
        q[2 * i] = __nv_cvt_float_to_fp8(x[2 * i] * scale, __NV_SATFINITE, __NV_E4M3);
    }
}

extern "C" __global__ void quantize_e4m3_x2_swapped(const float* x, __nv_fp8_storage_t* q,
                                                    float scale, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (2 * i + 1 < n) {
        float2 v = make_float2(x[2 * i + 1] * scale, x[2 * i] * scale);   // BUG: halves swapped
        reinterpret_cast<__nv_fp8x2_e4m3*>(q)[i] = __nv_fp8x2_e4m3(v);
    } else if (2 * i < n) {
        q[2 * i] = __nv_cvt_float_to_fp8(x[2 * i] * scale, __NV_SATFINITE, __NV_E4M3);
    }
}

extern "C" __global__ void quantize_e5m2_x2(const float* x, __nv_fp8_storage_t* q, float scale,
                                            int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (2 * i + 1 < n) {
        float2 v = make_float2(x[2 * i] * scale, x[2 * i + 1] * scale);
        reinterpret_cast<__nv_fp8x2_e5m2*>(q)[i] = __nv_fp8x2_e5m2(v);   // BUG: e5m2
    } else if (2 * i < n) {
        q[2 * i] = __nv_cvt_float_to_fp8(x[2 * i] * scale, __NV_SATFINITE, __NV_E4M3);
    }
}

extern "C" __global__ void dequantize_e4m3(const __nv_fp8_e4m3* q, float* y, float scale, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = float(q[i]) * scale;
}

extern "C" __global__ void dequantize_e4m3_x2(const __nv_fp8_e4m3* q, float* y, float scale,
                                              int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (2 * i + 1 < n) {
        float2 v = float2(reinterpret_cast<const __nv_fp8x2_e4m3*>(q)[i]);
        y[2 * i] = v.x * scale;
        y[2 * i + 1] = v.y * scale;
    } else if (2 * i < n) {
        y[2 * i] = float(q[2 * i]) * scale;
    }
}
