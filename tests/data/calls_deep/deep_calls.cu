// A chain of 40 non-inlined device functions (f39 calls f38 ... f0), and a recursive
// one: call depth past the old limit of 16 (tests/golden/test_call_depth.py).
// nvcc -ptx -arch=sm_90 -O3 deep_calls.cu -o deep_calls.ptx
__device__ __noinline__ int f0(int v) { return v + 1; }
__device__ __noinline__ int f1(int v) { return f0(v ^ 1) + 1; }
__device__ __noinline__ int f2(int v) { return f1(v ^ 2) + 2; }
__device__ __noinline__ int f3(int v) { return f2(v ^ 3) + 3; }
__device__ __noinline__ int f4(int v) { return f3(v ^ 4) + 4; }
__device__ __noinline__ int f5(int v) { return f4(v ^ 5) + 5; }
__device__ __noinline__ int f6(int v) { return f5(v ^ 6) + 6; }
__device__ __noinline__ int f7(int v) { return f6(v ^ 7) + 7; }
__device__ __noinline__ int f8(int v) { return f7(v ^ 8) + 8; }
__device__ __noinline__ int f9(int v) { return f8(v ^ 9) + 9; }
__device__ __noinline__ int f10(int v) { return f9(v ^ 10) + 10; }
__device__ __noinline__ int f11(int v) { return f10(v ^ 11) + 11; }
__device__ __noinline__ int f12(int v) { return f11(v ^ 12) + 12; }
__device__ __noinline__ int f13(int v) { return f12(v ^ 13) + 13; }
__device__ __noinline__ int f14(int v) { return f13(v ^ 14) + 14; }
__device__ __noinline__ int f15(int v) { return f14(v ^ 15) + 15; }
__device__ __noinline__ int f16(int v) { return f15(v ^ 16) + 16; }
__device__ __noinline__ int f17(int v) { return f16(v ^ 17) + 17; }
__device__ __noinline__ int f18(int v) { return f17(v ^ 18) + 18; }
__device__ __noinline__ int f19(int v) { return f18(v ^ 19) + 19; }
__device__ __noinline__ int f20(int v) { return f19(v ^ 20) + 20; }
__device__ __noinline__ int f21(int v) { return f20(v ^ 21) + 21; }
__device__ __noinline__ int f22(int v) { return f21(v ^ 22) + 22; }
__device__ __noinline__ int f23(int v) { return f22(v ^ 23) + 23; }
__device__ __noinline__ int f24(int v) { return f23(v ^ 24) + 24; }
__device__ __noinline__ int f25(int v) { return f24(v ^ 25) + 25; }
__device__ __noinline__ int f26(int v) { return f25(v ^ 26) + 26; }
__device__ __noinline__ int f27(int v) { return f26(v ^ 27) + 27; }
__device__ __noinline__ int f28(int v) { return f27(v ^ 28) + 28; }
__device__ __noinline__ int f29(int v) { return f28(v ^ 29) + 29; }
__device__ __noinline__ int f30(int v) { return f29(v ^ 30) + 30; }
__device__ __noinline__ int f31(int v) { return f30(v ^ 31) + 31; }
__device__ __noinline__ int f32(int v) { return f31(v ^ 32) + 32; }
__device__ __noinline__ int f33(int v) { return f32(v ^ 33) + 33; }
__device__ __noinline__ int f34(int v) { return f33(v ^ 34) + 34; }
__device__ __noinline__ int f35(int v) { return f34(v ^ 35) + 35; }
__device__ __noinline__ int f36(int v) { return f35(v ^ 36) + 36; }
__device__ __noinline__ int f37(int v) { return f36(v ^ 37) + 37; }
__device__ __noinline__ int f38(int v) { return f37(v ^ 38) + 38; }
__device__ __noinline__ int f39(int v) { return f38(v ^ 39) + 39; }

extern "C" __global__ void deep(const int* x, int* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = f39(x[i]);
}

__device__ __noinline__ int fib(int v) { return v < 2 ? v : fib(v - 1) + fib(v - 2); }

extern "C" __global__ void recursive(const int* x, int* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fib(x[i] & 7);
}
