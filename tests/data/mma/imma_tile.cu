// Integer mma through inline PTX, for tests/semantics/test_mma_int.py. Build:
//   nvcc -ptx -arch=sm_80 -O3 imma_tile.cu -o imma_tile.ptx
// One warp. A: 16x32 s8/u8 bytes, row-major; B: 32x8 bytes stored by columns (B[col*32+row]);
// C, D, D2: 16x8 s32, row-major. The fragments are gathered here from the PTX ISA's layout for
// mma.m16n8k32 .s8/.u8 (9.7.14.5, "Matrix Fragments for mma.m16n8k32"):
//   a_i: row g (i in 0-3, 8-11) or g+8, column 4t + (i&3) + 16 (i >= 8): registers of four
//        consecutive bytes of a row;  b_i: row 4t + (i&3) + 16 (i >= 4), column g;
//   c_i: row g + 8 (i >= 2), column 2t + (i&1).
// D = A*B + C as s8 x s8 with .satfinite; D2 = A*B + C as u8 x s8, wrapping.
#include <cstdint>

extern "C" __global__ void imma_tile(const int8_t* A, const int8_t* B, const int* C, int* D,
                                     int* D2)
{
    int lane = threadIdx.x % 32, g = lane >> 2, t = lane % 4;
    uint32_t a[4], b[2];
    for (int r = 0; r < 4; ++r)
        a[r] = *reinterpret_cast<const uint32_t*>(A + (g + 8 * (r & 1)) * 32 + 4 * t + 16 * (r >> 1));
    for (int r = 0; r < 2; ++r)
        b[r] = *reinterpret_cast<const uint32_t*>(B + g * 32 + 4 * t + 16 * r);
    int c[4], d[4], d2[4];
    for (int i = 0; i < 4; ++i)
        c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
                   "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=r"(d2[0]), "=r"(d2[1]), "=r"(d2[2]), "=r"(d2[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
                   "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
    for (int i = 0; i < 4; ++i) {
        int at = (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1);
        D[at] = d[i];
        D2[at] = d2[i];
    }
}
