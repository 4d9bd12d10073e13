// SGEMM as in a public tutorial series (kernel 1: naive, kernel 2: global-memory coalescing),
// parameters named as there (A, B, C): user names must never collide with keq's own.
#define BS 8

extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < M && y < N) {
        float tmp = 0.0f;
        for (int i = 0; i < K; ++i)
            tmp += A[x * K + i] * B[i * N + y];
        C[x * N + y] = alpha * tmp + beta * C[x * N + y];
    }
}

extern "C" __global__ void sgemm_coalesce(int M, int N, int K, float alpha, const float* A,
                                          const float* B, float beta, float* C)
{
    const int cRow = blockIdx.x * BS + (threadIdx.x / BS);
    const int cCol = blockIdx.y * BS + (threadIdx.x % BS);
    if (cRow < M && cCol < N) {
        float tmp = 0.0f;
        for (int i = 0; i < K; ++i)
            tmp += A[cRow * K + i] * B[i * N + cCol];
        C[cRow * N + cCol] = alpha * tmp + beta * C[cRow * N + cCol];
    }
}
