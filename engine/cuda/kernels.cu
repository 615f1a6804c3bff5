// outcore's GPU kernels, compiled with NVRTC at first use (engine/cuda).
// They mirror engine/nn's CPU code operation for operation, so a GPU step
// computes what the CPU trainer computes within float rounding: the same
// mean aggregation, the same counter-based dropout bits (engine/nn
// dropout.go), the same softmax cross-entropy in double and the same Adam.
// Row-major float32 tensors; int32 CSR blocks (indptr over destinations,
// indices = local source ids).

typedef unsigned long long u64;

extern "C" {

// out[r, :] = x[idx[r], :] for r < n (rows of width d).
__global__ void gather_rows(float* out, const float* x, const int* idx, int n, int d) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)n * d;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int r = (int)(t / d), c = (int)(t % d);
		out[t] = x[(long long)idx[r] * d + c];
	}
}

// SAGE forward, aggregate first: cat[i] = [x[i] | mean_{e in row i} x[indices[e]]]
// for the nd destinations (a row without edges aggregates to 0).
__global__ void sage_cat(float* cat, const float* x, const int* indptr, const int* indices, int nd, int in) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)nd * in;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / in), c = (int)(t % in);
		int s = indptr[i], e = indptr[i + 1];
		float acc = 0.f;
		for (int k = s; k < e; k++) acc += x[(long long)indices[k] * in + c];
		float m = e > s ? acc * (1.f / (float)(e - s)) : 0.f;
		cat[(long long)i * 2 * in + c] = x[(long long)i * in + c];
		cat[(long long)i * 2 * in + in + c] = m;
	}
}

// SAGE backward into dx (zeroed, ns rows): dx[i] += dcat[i, :in] and, for
// every edge (i <- j), dx[j] += dcat[i, in:] / deg(i).
__global__ void sage_cat_back(float* dx, const float* dcat, const int* indptr, const int* indices, int nd, int in) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)nd * in;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / in), c = (int)(t % in);
		int s = indptr[i], e = indptr[i + 1];
		atomicAdd(&dx[(long long)i * in + c], dcat[(long long)i * 2 * in + c]);
		if (e > s) {
			float g = dcat[(long long)i * 2 * in + in + c] * (1.f / (float)(e - s));
			for (int k = s; k < e; k++) atomicAdd(&dx[(long long)indices[k] * in + c], g);
		}
	}
}

// y[r, c] += b[c]
__global__ void add_bias(float* y, const float* b, int n, int d) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)n * d;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) y[t] += b[t % d];
}

// y[i] = 1 everywhere (the ones vector of the bias-gradient GEMM).
__global__ void fill(float* y, float v, int n) {
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	for (; t < n; t += gridDim.x * blockDim.x) y[t] = v;
}

__device__ __forceinline__ u64 splitmix64(u64 x) {
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

// ReLU then dropout with engine/nn's bits: element i keeps when the 16-bit
// lane (i & 3) of splitmix64(key ^ (i>>2)*0xd1342543de82ef95) is >= thr.
__global__ void relu_drop_fwd(float* y, long long n, int drop, unsigned thr, float scale, u64 key) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	for (; t < n; t += (long long)gridDim.x * blockDim.x) {
		float v = fmaxf(y[t], 0.f);
		if (drop) {
			u64 bits = splitmix64(key ^ (u64)(t >> 2) * 0xd1342543de82ef95ULL);
			unsigned lane = (unsigned)(bits >> (16 * (t & 3))) & 0xffffu;
			v = lane >= thr ? v * scale : 0.f;
		}
		y[t] = v;
	}
}

// g *= out > 0 ? scale : 0 (ReLU and dropout backward; out is the
// forward's output after dropout).
__global__ void relu_drop_bwd(float* g, const float* out, long long n, float scale) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	for (; t < n; t += (long long)gridDim.x * blockDim.x) g[t] = out[t] > 0.f ? g[t] * scale : 0.f;
}

// Softmax cross-entropy per row (one thread a row): grad = (softmax - onehot)
// * inv, rowloss = logsumexp - logit[y], correct = argmax == y; rows with a
// label < 0 get a zero gradient and no loss.
__global__ void softmax_ce(const float* logits, const int* labels, float* grad, double* rowloss, int* correct,
                           int n, int C, float inv) {
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= n) return;
	const float* row = logits + (long long)r * C;
	float* g = grad + (long long)r * C;
	int y = labels[r];
	if (y < 0) {
		for (int j = 0; j < C; j++) g[j] = 0.f;
		rowloss[r] = 0;
		correct[r] = 0;
		return;
	}
	float mx = row[0];
	int arg = 0;
	for (int j = 1; j < C; j++)
		if (row[j] > mx) { mx = row[j]; arg = j; }
	double sum = 0;
	for (int j = 0; j < C; j++) sum += exp((double)(row[j] - mx));
	double lse = (double)mx + log(sum);
	rowloss[r] = lse - (double)row[y];
	correct[r] = arg == y;
	for (int j = 0; j < C; j++) g[j] = (float)exp((double)row[j] - lse) * inv;
	g[y] -= inv;
}

// Adam (engine/nn adam.go): L2 decay added to the gradient, bias
// corrections folded into stepSize and sq2.
__global__ void adam(float* w, const float* g, float* m, float* v, int n, float b1, float b2, float eps, float wd,
                     float stepSize, float sq2) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	for (; i < n; i += gridDim.x * blockDim.x) {
		float gi = g[i] + wd * w[i];
		m[i] = b1 * m[i] + (1.f - b1) * gi;
		v[i] = b2 * v[i] + (1.f - b2) * gi * gi;
		float denom = (float)sqrt((double)v[i]) / sq2 + eps;
		w[i] -= stepSize * m[i] / denom;
	}
}

}  // extern "C"

extern "C" {

// out[i, c] = sum_e w[e] * x[idx[e], c] over row i's edges (GCN's
// normalised aggregation, self loops included in the CSR).
__global__ void spmm_w(float* out, const float* x, const int* ptr, const int* idx, const float* w, int nd, int d) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)nd * d;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / d), c = (int)(t % d);
		float acc = 0.f;
		for (int e = ptr[i]; e < ptr[i + 1]; e++) acc += w[e] * x[(long long)idx[e] * d + c];
		out[t] = acc;
	}
}

// dx[idx[e], c] += w[e] * g[i, c] (spmm_w's transpose; dx zeroed first).
__global__ void spmm_w_t(float* dx, const float* g, const int* ptr, const int* idx, const float* w, int nd, int d) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)nd * d;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / d), c = (int)(t % d);
		float gi = g[t];
		for (int e = ptr[i]; e < ptr[i + 1]; e++) atomicAdd(&dx[(long long)idx[e] * d + c], w[e] * gi);
	}
}

// Dropout alone (engine/nn Dropout: the input features of GCN and GAT).
__global__ void drop_fwd(float* y, long long n, unsigned thr, float scale, u64 key) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	for (; t < n; t += (long long)gridDim.x * blockDim.x) {
		u64 bits = splitmix64(key ^ (u64)(t >> 2) * 0xd1342543de82ef95ULL);
		unsigned lane = (unsigned)(bits >> (16 * (t & 3))) & 0xffffu;
		y[t] = lane >= thr ? y[t] * scale : 0.f;
	}
}

}  // extern "C"
