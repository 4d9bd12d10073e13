// Candidate for the gate tests: the same add as sum bits plus shifted carries,
// (a ^ b) + 2 * (a & b). Equal for every input, but not the same term after z3's simplifier,
// so proving it takes a solver obligation (what the gate tests tamper with).
extern "C" __global__ void carry_save(const unsigned int* a, const unsigned int* b, unsigned int* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int x = a[i], y = b[i];
        c[i] = (x ^ y) + ((x & y) << 1);
    }
}
