// One 16x8 tile, as a kernel engineer writes it: A (16x16, row-major) and B (stored as 8
// rows of 16: column-major 16x8) staged in shared memory, ldmatrix .x4 / .x2 into the
// fragments, one mma.m16n8k16; nvcc -ptx -arch=sm_90 -O3 (tests/semantics/test_mma_ops.py).
#include <cuda_fp16.h>
extern "C" __global__ void tile(const half* A, const half* B, float* C)
{
    __shared__ __align__(16) half sa[16 * 16];
    __shared__ __align__(16) half sb[8 * 16];
    int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32) sa[i] = A[i];
    for (int i = lane; i < 128; i += 32) sb[i] = B[i];
    __syncwarp();
    unsigned a0, a1, a2, a3, b0, b1;
    unsigned pa = (unsigned)__cvta_generic_to_shared(&sa[(lane % 16) * 16 + (lane / 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(pa));
    unsigned pb = (unsigned)__cvta_generic_to_shared(&sb[(lane % 8) * 16 + ((lane / 8) % 2) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                 : "=r"(b0), "=r"(b1) : "r"(pb));
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    int g = lane / 4, t = lane % 4;
    C[g * 8 + 2 * t] = d0; C[g * 8 + 2 * t + 1] = d1;
    C[(g + 8) * 8 + 2 * t] = d2; C[(g + 8) * 8 + 2 * t + 1] = d3;
}
