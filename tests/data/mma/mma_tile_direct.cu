#include <cuda_fp16.h>
// The same tile with the fragments read straight from global memory (no shared staging,
// no ldmatrix): element by element as the mma layout places them.
extern "C" __global__ void tile_direct(const half* A, const half* B, float* C)
{
    int lane = threadIdx.x;
    int g = lane / 4, t = lane % 4;
    auto pack = [](half lo, half hi) {
        return (unsigned)__half_as_ushort(lo) | ((unsigned)__half_as_ushort(hi) << 16);
    };
    unsigned a0 = pack(A[g * 16 + 2 * t], A[g * 16 + 2 * t + 1]);
    unsigned a1 = pack(A[(g + 8) * 16 + 2 * t], A[(g + 8) * 16 + 2 * t + 1]);
    unsigned a2 = pack(A[g * 16 + 2 * t + 8], A[g * 16 + 2 * t + 9]);
    unsigned a3 = pack(A[(g + 8) * 16 + 2 * t + 8], A[(g + 8) * 16 + 2 * t + 9]);
    unsigned b0 = pack(B[g * 16 + 2 * t], B[g * 16 + 2 * t + 1]);
    unsigned b1 = pack(B[g * 16 + 2 * t + 8], B[g * 16 + 2 * t + 9]);
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    C[g * 8 + 2 * t] = d0; C[g * 8 + 2 * t + 1] = d1;
    C[(g + 8) * 8 + 2 * t] = d2; C[(g + 8) * 8 + 2 * t + 1] = d3;
}
