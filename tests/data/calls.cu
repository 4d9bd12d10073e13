// Device functions kept out of line (__noinline__) so the PTX has real calls: several
// arguments, a 64-bit result, a call under divergence, a nested call, and a callee that
// touches shared and global memory. Built by: nvcc -ptx -arch=sm_90 -O3 calls.cu -o calls.ptx
__device__ __noinline__ float axpb(float a, float x, float b) { return a * x + b; }
__device__ __noinline__ long long widen(int v, int shift) { return ((long long)v) << shift; }
__device__ __noinline__ int twice_plus(int v) { return 2 * v + 1; }
__device__ __noinline__ int nested(int v) { return twice_plus(v) + twice_plus(v + 1); }
__device__ __noinline__ void bump(int* p, int by) { atomicAdd(p, by); }

extern "C" __global__ void calls(const float* x, float* y, long long* w, int* z, int* total,
                                 int n)
{
    __shared__ int local[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = axpb(2.0f, x[i], 1.0f);
        w[i] = widen(i, i % 7);
        if (i % 3 == 0) {                  // a call under divergence
            z[i] = nested(i);
        } else {
            z[i] = -twice_plus(i);
        }
        local[threadIdx.x] = i;
        bump(total, local[threadIdx.x] & 1);
    }
}
