// One kernel per feature family real code uses, for `bench/reach.py --samples` (compiled with
// nvcc -arch=sm_90 -ptx -O3 -rdc=true): what keq models of them, and what blocks the rest.
#include <cstdio>
#include <cassert>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <mma.h>
#include <cuda/atomic>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void uses_printf(const float* x) { printf("x0 = %f\n", x[threadIdx.x]); }
extern "C" __global__ void uses_assert(const int* x) { assert(x[threadIdx.x] >= 0); }
extern "C" __global__ void uses_texture(cudaTextureObject_t t, float* out) {
    out[threadIdx.x] = tex2D<float>(t, threadIdx.x + 0.5f, 0.5f);
}
extern "C" __global__ void uses_surface(cudaSurfaceObject_t s) {
    surf2Dwrite(1.0f, s, threadIdx.x * 4, 0);
}
extern "C" __global__ void uses_fp8(const float* x, __nv_fp8x2_storage_t* out) {
    out[threadIdx.x] = __nv_cvt_float2_to_fp8x2(make_float2(x[0], x[1]), __NV_SATFINITE, __NV_E4M3);
}
extern "C" __global__ void uses_wmma(const half* a, const half* b, float* c) {
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
extern "C" __global__ void uses_acquire_release(int* flag, int* data) {
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    if (threadIdx.x == 0) { data[0] = 1; f.store(1, cuda::memory_order_release); }
    else { while (f.load(cuda::memory_order_acquire) == 0) {} data[threadIdx.x] = data[0]; }
}
extern "C" __global__ void uses_grid_sync(int* x) {
    cg::this_grid().sync();
    x[threadIdx.x] += 1;
}
extern "C" __global__ void uses_half2(const half2* a, half2* b) {
    b[threadIdx.x] = __hmul2(a[threadIdx.x], __hadd2(a[threadIdx.x], a[threadIdx.x]));
}
extern "C" __global__ void uses_fast_exp(const float* x, float* y) {
    y[threadIdx.x] = __expf(x[threadIdx.x]) + tanhf(x[threadIdx.x]);
}
