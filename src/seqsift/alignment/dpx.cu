// Hopper (sm_90) DPX instructions behind the numba-cuda foreign-function ABI (seqsift/alignment/_gpu.py).
// Each returns 0 (no Python exception) and writes its result through the first pointer.
extern "C" __device__ int seqsift_vimax3_s16x2_relu(unsigned int* r, unsigned int a, unsigned int b, unsigned int c) {
    *r = __vimax3_s16x2_relu(a, b, c);  // per half-word max(a, b, c, 0)
    return 0;
}
extern "C" __device__ int seqsift_viaddmax_s16x2(unsigned int* r, unsigned int a, unsigned int b, unsigned int c) {
    *r = __viaddmax_s16x2(a, b, c);  // per half-word max(a + b, c): no ReLU for the gap states
    return 0;
}
extern "C" __device__ int seqsift_vadd_s16x2(unsigned int* r, unsigned int a, unsigned int b) {
    *r = __vadd2(a, b);  // per half-word a + b, wrapping
    return 0;
}
