// Reference: y = a*x + y with a separately rounded multiply and add.
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = __fadd_rn(__fmul_rn(a, x[i]), y[i]);
}
