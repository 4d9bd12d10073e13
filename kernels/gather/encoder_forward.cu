// GPT-2 encoder (token + position embedding), one thread per output element, as in the
// first version of a public LLM training codebase: out[b,t,c] = wte[inp[b,t], c] + wpe[t, c].
// The token ids in `inp` index `wte`: the spec says they lie in [0, V) (`range` on inp).
extern "C" __global__ void encoder_forward(float* out, const int* inp, const float* wte,
                                           const float* wpe, int B, int T, int C, int V)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int N = B * T * C;
    if (idx < N) {
        int bt = idx / C;
        int t = bt % T;
        int c = idx % C;
        int ix = inp[bt];
        out[idx] = wte[ix * C + c] + wpe[t * C + c];
    }
}
