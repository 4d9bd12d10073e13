// Each thread takes its warp neighbour's element (lane + 1 mod 32): straight from global
// memory, or staged through shared memory with __syncwarp() (bar.warp.sync orders a warp's
// accesses: PTX ISA 9.7.13.2), or staged without it (a race).
extern "C" __global__ void rotate_global(const int* x, int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = (i & ~31) | ((i + 1) & 31);
    if (i < n)
        out[i] = j < n ? x[j] : 0;
}

extern "C" __global__ void rotate_shared(const int* x, int* out, int n)
{
    __shared__ int s[64];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0;
    __syncwarp();
    int j = (i & ~31) | ((i + 1) & 31);
    if (i < n)
        out[i] = j < n ? s[(t & ~31) | ((t + 1) & 31)] : 0;
}

extern "C" __global__ void rotate_shared_nosync(const int* x, int* out, int n)
{
    __shared__ int s[64];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0;
    int j = (i & ~31) | ((i + 1) & 31);
    if (i < n)
        out[i] = j < n ? s[(t & ~31) | ((t + 1) & 31)] : 0;
}

// Half-warp tiles (cooperative groups' tiled_partition<16>): each half syncs with its own
// membermask (0x0000ffff, 0xffff0000) and takes the next element of its half. Reference:
// `rotate16_global`. A bug: each half syncs alone but reads the other half (a race).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void rotate16_global(const int* x, int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = (i & ~15) | ((i + 1) & 15);
    if (i < n)
        out[i] = j < n ? x[j] : 0;
}

extern "C" __global__ void rotate16_tiles(const int* x, int* out, int n)
{
    __shared__ int s[64];
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(cg::this_thread_block());
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0;
    tile.sync();
    int j = (i & ~15) | ((i + 1) & 15);
    if (i < n)
        out[i] = j < n ? s[(t & ~15) | ((t + 1) & 15)] : 0;
}

extern "C" __global__ void rotate16_tiles_across(const int* x, int* out, int n)
{
    __shared__ int s[64];
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(cg::this_thread_block());
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0;
    tile.sync();
    int j = i ^ 16;
    if (i < n)
        out[i] = j < n ? s[t ^ 16] : 0;
}

extern "C" __global__ void swap16_global(const int* x, int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = i ^ 16;
    if (i < n)
        out[i] = j < n ? x[j] : 0;
}

// Only the lower half of each warp takes part: it stages its elements, syncs with
// __syncwarp(0xffff) under the divergent branch, and takes the next element of its half.
extern "C" __global__ void rotate16_lower(const int* x, int* out, int n)
{
    __shared__ int s[64];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    if ((t & 31) < 16) {
        s[t] = i < n ? x[i] : 0;
        __syncwarp(0xffff);
        int j = (i & ~15) | ((i + 1) & 15);
        if (i < n)
            out[i] = j < n ? s[(t & ~15) | ((t + 1) & 15)] : 0;
    }
}

extern "C" __global__ void rotate16_lower_global(const int* x, int* out, int n)
{
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    if ((t & 31) < 16) {
        int j = (i & ~15) | ((i + 1) & 15);
        if (i < n)
            out[i] = j < n ? x[j] : 0;
    }
}
