// Packed halves (issue 30): a residual add on bf16 and f16, written per element and with
// __nv_bfloat162 / __half2 (two halves in one 32-bit register), as LLM training code does.
//   nvcc -ptx -arch=sm_90 -O3 packed.cu -o packed.ptx
// The same arithmetic on the same halves must give identical terms (no solver).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

extern "C" __global__ void resid_bf16(const __nv_bfloat16* x, const __nv_bfloat16* r,
                                      __nv_bfloat16* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = __hadd(x[i], r[i]);
}

extern "C" __global__ void resid_bf16x2(const __nv_bfloat162* x, const __nv_bfloat162* r,
                                        __nv_bfloat162* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2)
        out[i] = __hadd2(x[i], r[i]);
}

// Bug: the halves of the residual swapped before the add.
extern "C" __global__ void resid_bf16x2_swapped(const __nv_bfloat162* x,
                                                const __nv_bfloat162* r,
                                                __nv_bfloat162* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2)
        out[i] = __hadd2(x[i], __lowhigh2highlow(r[i]));
}

extern "C" __global__ void scale_resid_f16(const __half* x, const __half* r, __half* out,
                                           __half s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = __hfma(x[i], s, r[i]);
}

extern "C" __global__ void scale_resid_f16x2(const __half2* x, const __half2* r, __half2* out,
                                             __half s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2)
        out[i] = __hfma2(x[i], __half2half2(s), r[i]);
}
