// Warp operations whose membermask is wrong for the threads that execute them: undefined
// behaviour (PTX ISA 9.7.9.6 shfl.sync, 9.7.9.7 vote.sync, 9.7.9.9 match.sync, 9.7.9.10
// redux.sync, 9.7.9.3 bar.warp.sync), and __activemask(), whose value depends on which
// threads the scheduler happens to have converged (9.7.9.4 activemask). One warp of 32.

extern "C" __global__ void broadcast_lane0(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    int v = x[t];
    int r = __shfl_sync(0xFFFFFFFFu, v, 0);
    if (t < n)
        out[t] = r;
}

// Every lane executes a shfl whose membermask names only the low 16: the upper half is not
// in the mask it executes with.
extern "C" __global__ void broadcast_lane0_half_mask(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    int v = x[t];
    int r = __shfl_sync(0x0000FFFFu, v, 0);
    if (t < n)
        out[t] = r;
}

// Lanes 1..31 read lane 0 with a shfl whose membermask leaves lane 0 out (lane 0 does not
// execute it): the value read is unspecified.
extern "C" __global__ void broadcast_lane0_source_out(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    int v = x[t];
    int r = v;
    if (t != 0)
        r = __shfl_sync(0xFFFFFFFEu, v, 0);
    if (t < n)
        out[t] = r;
}

extern "C" __global__ void any_positive(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    unsigned b = __ballot_sync(0xFFFFFFFFu, x[t] > 0);
    if (t < n)
        out[t] = b != 0;
}

// The whole warp votes with a membermask of lane 0 alone.
extern "C" __global__ void any_positive_one_lane_mask(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    unsigned b = __ballot_sync(0x1u, x[t] > 0);
    if (t < n)
        out[t] = b != 0;
}

extern "C" __global__ void sum_warp(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    int v = x[t];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
    if (t < n)
        out[t] = v;
}

// redux.sync with a membermask of the even lanes, executed by every lane.
extern "C" __global__ void sum_warp_redux_even_mask(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    int v = __reduce_add_sync(0x55555555u, x[t]);
    if (t < n)
        out[t] = v;
}

extern "C" __global__ void lanes_equal_to_mine(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    unsigned m = __match_any_sync(0xFFFFFFFFu, x[t] & 3);
    if (t < n)
        out[t] = m;
}

extern "C" __global__ void lanes_equal_to_mine_low_mask(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    unsigned m = __match_any_sync(0x0000FFFFu, x[t] & 3);
    if (t < n)
        out[t] = m;
}

extern "C" __global__ void copy(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    if (t < n)
        out[t] = x[t];
}

// __syncwarp with a membermask that leaves out the executing lane.
extern "C" __global__ void copy_syncwarp_not_me(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    int v = x[t];
    __syncwarp(~(1u << t));
    if (t < n)
        out[t] = v;
}

// __activemask() is full only when the scheduler happens to have all 32 converged.
extern "C" __global__ void copy_if_converged(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    int v = x[t];
    if (__activemask() != 0xFFFFFFFFu)
        v = 0;
    if (t < n)
        out[t] = v;
}
